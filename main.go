// Command kraftwatch is a sidecar for Apache Kafka in KRaft mode: it tails the
// __cluster_metadata log on disk, or fetches it from the controller quorum as a Raft
// observer, keeps per-topic hashes (KIP-1101), reads group subscriptions from
// __consumer_offsets and publishes a rebalance-needed event to NATS when a group's
// hash changes.
//
//	kraftwatch [run]                  the sidecar, configured by KRAFTWATCH_* variables
//	kraftwatch dump [...] PATH        print a metadata log, snapshot or segment
//	kraftwatch hashes [...] DIR       topic and group hashes of a metadata log
//	kraftwatch verify [...] DIR       compare kafka-scheme hashes with the coordinator's
//	                                  (dump, hashes and verify take --bootstrap-controller
//	                                  HOST:PORT instead of a directory)
//	kraftwatch groups [...] [ID]      group states and members, from a sidecar or Kafka
//	kraftwatch watch [...]            print events as they arrive on NATS
//	kraftwatch whatif [...] --url URL which groups a maintenance would make rebalance
//	kraftwatch probe URL              exit 0 when URL answers 200 (container health checks)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/KimMachineGun/automemlimit/memlimit"

	"github.com/kraftwatch/kraftwatch/cli"
)

// version is what `kraftwatch version` and kraftwatch_info{version} say: set at build
// time with -ldflags '-X main.version=...' for a release, else init takes the VCS
// revision the Go toolchain stamps into a binary built in a git checkout (make build).
var version string

func init() { version = buildVersion(version, debug.ReadBuildInfo) }

// buildVersion returns set when not empty, else the module's version, else the VCS
// revision (12 digits, "-dirty" when the tree had changes), else "dev".
func buildVersion(set string, info func() (*debug.BuildInfo, bool)) string {
	if set != "" {
		return set
	}
	bi, ok := info()
	if !ok {
		return "dev"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value[:min(12, len(s.Value))]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return "dev"
	}
	return rev + dirty
}

const usage = `kraftwatch — rebalance-needed events for Kafka groups, from the KRaft metadata log

Usage:
  kraftwatch [run]                 run the sidecar (configured by the variables below)
  kraftwatch dump [--records] [--json] PATH
                                   print a metadata log dir, .checkpoint or .log
  kraftwatch hashes [--scheme murmur3|kafka] [--bootstrap HOSTS] DIR
                                   topic hashes (and group hashes with --bootstrap)
  kraftwatch verify --bootstrap HOSTS DIR
                                   compare kafka-scheme group hashes with the
                                   MetadataHash the coordinator stored; exit 1 on a mismatch
                                   dump, hashes and verify take --bootstrap-controller
                                   HOST:PORT[,...] instead of DIR: the metadata log of the
                                   controller quorum (leader's snapshot + committed log),
                                   TLS and SASL from KRAFTWATCH_CONTROLLER_*
  kraftwatch groups [--type T] [--state S] [--prefix P] --url URL [ID]
  kraftwatch groups [...] --bootstrap HOSTS DIR|--bootstrap-controller HOSTS [ID]
                                   a table of groups (type, state, epochs, members,
                                   hash), or one group's members, assignments, hashes
                                   and timeline, from a running kraftwatch (--url) or
                                   straight from Kafka
  kraftwatch watch [--nats URL] [--prefix P] [--cluster ID]
                                   print rebalance-needed events as they arrive
                                   (with run's KRAFTWATCH_NATS_* settings: credentials, TLS)
  kraftwatch whatif --url URL [--reassignment FILE] [--cruise-control FILE]
                   [--add-partitions T=N] [--delete-topic T] [--create-topic T=N]
                   [--set-rack B=R] [--decommission B [--suggest FILE]]
                   [--json] [--max-rebalances N]
  kraftwatch whatif [...] --bootstrap HOSTS DIR|--bootstrap-controller HOSTS
                                   which groups a maintenance would make rebalance and
                                   how often, asked of a running kraftwatch (--url) or
                                   computed in one shot from Kafka; --suggest writes
                                   the rack-neutral plan that empties broker B
  kraftwatch probe URL             exit 0 if URL answers 200 OK
  kraftwatch version

Environment of 'kraftwatch run':
`

func main() {
	os.Exit(mainCode(os.Args[1:], os.Environ(), os.Stdout, os.Stderr))
}

func mainCode(args, environ []string, stdout, stderr io.Writer) int {
	cmd := "run"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "run":
		return runMain(environ, stderr)
	case "dump":
		return cli.DumpEnv(args, environ, stdout, stderr)
	case "hashes":
		return cli.HashesEnv(args, environ, stdout, stderr)
	case "verify":
		return cli.VerifyEnv(args, environ, stdout, stderr)
	case "watch":
		opts, err := natsOptionsFromEnv(environ)
		if err != nil {
			fmt.Fprintf(stderr, "kraftwatch watch: %v\n", err)
			return 2
		}
		return cli.Watch(args, environ, opts, stdout, stderr)
	case "groups":
		return cli.Groups(args, environ, stdout, stderr)
	case "whatif":
		return cli.WhatIfEnv(args, environ, stdout, stderr)
	case "probe":
		return cli.Probe(args, stderr)
	case "version":
		fmt.Fprintln(stdout, "kraftwatch", version)
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		printSettings(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "kraftwatch: unknown command %q\n\n%s", cmd, usage)
		printSettings(stderr)
		return 2
	}
}

// runMain runs the sidecar until SIGTERM or SIGINT. Exit codes: 0 after a clean
// shutdown, 1 on a runtime failure, 2 for bad configuration.
func runMain(environ []string, stderr io.Writer) int {
	raw, err := loadConfig(environ)
	cfg, verr := raw.validate()
	if err = errors.Join(err, verr); err != nil {
		fmt.Fprintf(stderr, "kraftwatch: bad configuration:\n")
		for _, e := range splitErrors(err) {
			fmt.Fprintf(stderr, "  %v\n", e)
		}
		fmt.Fprintf(stderr, "run 'kraftwatch --help' for every setting\n")
		return 2
	}
	log := cfg.logger(stderr)
	followMemoryLimit(memlimit.FromCgroup, log)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := run(ctx, cfg, log); err != nil {
		log.Error("kraftwatch stopped", "error", err)
		return 1
	}
	log.Info("kraftwatch stopped")
	return 0
}

// splitErrors flattens joined errors (errors.Join of errors.Join ...) into the list of
// their leaves; nil gives none.
func splitErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, splitErrors(e)...)
		}
		return out
	}
	return []error{err}
}
