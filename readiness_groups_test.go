package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kraftwatch/kraftwatch/groups"
)

// TestGroupsReadinessCause: while catching up, a bootstrap address where nothing
// listens is named in /readyz's groups reason with the setting to check, at once,
// not "0 records behind".
func TestGroupsReadinessCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	r, err := groups.NewReader(groups.ReaderConfig{Brokers: []string{addr}, StallAfter: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if err := groupsReadiness(r, time.Minute); err == nil || !strings.Contains(err.Error(), "catching up") {
		t.Fatalf("before Run: %v, want catching up", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, func([]groups.Message) error { return nil }) }()
	defer func() { cancel(); <-done }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := groupsReadiness(r, time.Minute)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if strings.Contains(msg, "connection refused") {
			for _, want := range []string{addr, "check KRAFTWATCH_BOOTSTRAP_SERVERS", "cannot list its partitions"} {
				if !strings.Contains(msg, want) {
					t.Errorf("groups reason %q does not say %q", msg, want)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("groups reason %q after 10 s, want connection refused", msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestGroupsHint: each reader error gets the setting an operator should check.
func TestGroupsHint(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"controller listener", fmt.Errorf("metadata of __consumer_offsets: %w (unexpected EOF)", groups.ErrNotBroker),
			"is this a controller listener? (unexpected EOF); KRAFTWATCH_BOOTSTRAP_SERVERS must name broker listeners"},
		{"unresolvable host", &net.DNSError{Err: "no such host", Name: "kafak"}, "check KRAFTWATCH_BOOTSTRAP_SERVERS"},
		{"stalled partition", &groups.StallError{Topic: "__consumer_offsets", Partitions: []groups.Stall{{Partition: 3, Lag: -1,
			Cause: groups.CauseNoAnswer, Leader: groups.Broker{ID: 2, Addr: "127.0.0.1:9093"}}}, For: 6 * time.Second},
			"partition 3 stalled for 6s, lag unknown: leader 2 (127.0.0.1:9093) has not answered for 6s (stalled after KRAFTWATCH_STALL_AFTER=5s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := groupsHint(tc.err, 5*time.Second).Error(); !strings.Contains(got, tc.want) {
				t.Errorf("groupsHint = %q, want it to hold %q", got, tc.want)
			}
		})
	}
}
