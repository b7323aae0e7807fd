package main

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/kraftwatch/kraftwatch/groups"
)

// groupsReadiness is the groups component's answer in /readyz: the reader's health,
// with the setting to check, wins over catching up; while catching up it also names at
// once why the partitions cannot be listed (a wrong bootstrap address never catches
// up, so "N records behind" would hide it for ever).
func groupsReadiness(reader *groups.Reader, stallAfter time.Duration) error {
	if err := reader.Health(); err != nil {
		return groupsHint(err, stallAfter)
	}
	select {
	case <-reader.CaughtUp():
		return nil
	default:
	}
	if err := reader.Unlisted(); err != nil {
		return groupsHint(fmt.Errorf("catching up with __consumer_offsets: cannot list its partitions: %w", err), stallAfter)
	}
	return fmt.Errorf("catching up with __consumer_offsets: %d records behind", reader.Lag())
}

// groupsHint appends to a reader error the setting an operator should check.
func groupsHint(err error, stallAfter time.Duration) error {
	var (
		dns   *net.DNSError
		stall *groups.StallError
	)
	switch {
	case errors.Is(err, groups.ErrNotBroker):
		return fmt.Errorf("%w; %sBOOTSTRAP_SERVERS must name broker listeners", err, envPrefix)
	case errors.Is(err, syscall.ECONNREFUSED), errors.As(err, &dns):
		return fmt.Errorf("%w; check %sBOOTSTRAP_SERVERS and that the brokers are up", err, envPrefix)
	case errors.As(err, &stall) && len(stall.Partitions) > 0:
		return fmt.Errorf("%w (stalled after %sSTALL_AFTER=%v)", err, envPrefix, stallAfter)
	}
	return err
}
