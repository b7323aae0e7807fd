package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"strings"
	"syscall"

	"github.com/nats-io/nats.go"

	"github.com/kraftwatch/kraftwatch/publish"
)

// Watch runs `kraftwatch watch` with the process environment environ: it subscribes to kraftwatch's subjects and prints each event on one line
// (or as JSON), until interrupted or --count events were printed.
func Watch(args, environ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("nats", envOr(environ, "KRAFTWATCH_NATS_URL", nats.DefaultURL), "NATS server URL")
	prefix := fs.String("prefix", envOr(environ, "KRAFTWATCH_SUBJECT_PREFIX", publish.DefaultPrefix), "subject prefix")
	cluster := fs.String("cluster", "", "only this Kafka cluster id (default: every cluster)")
	asJSON := fs.Bool("json", false, "print each event's JSON as received")
	count := fs.Int("count", 0, "exit after this many events (0: run until interrupted)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	subject := *prefix + ".>"
	if *cluster != "" {
		subject = *prefix + "." + publish.EscapeToken(*cluster) + ".>"
	}
	nc, err := nats.Connect(*url, nats.Name("kraftwatch watch"), nats.MaxReconnects(-1))
	if err != nil {
		fmt.Fprintf(stderr, "kraftwatch watch: %v\n", err)
		return 1
	}
	defer nc.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	msgs := make(chan *nats.Msg, 1024)
	sub, err := nc.ChanSubscribe(subject, msgs)
	if err != nil {
		fmt.Fprintf(stderr, "kraftwatch watch: %v\n", err)
		return 1
	}
	defer sub.Unsubscribe()
	fmt.Fprintf(stderr, "kraftwatch watch: listening on %s at %s\n", subject, nc.ConnectedUrlRedacted())
	for seen := 0; *count == 0 || seen < *count; {
		select {
		case <-ctx.Done():
			return 0
		case m := <-msgs:
			if *asJSON {
				fmt.Fprintf(stdout, "%s\n", m.Data)
				seen++
				continue
			}
			env, err := publish.Decode(m.Data)
			if err != nil {
				fmt.Fprintf(stderr, "kraftwatch watch: %s: not a kraftwatch event: %v\n", m.Subject, err)
				continue
			}
			fmt.Fprintln(stdout, describeEvent(env))
			seen++
		}
	}
	return 0
}

// describeEvent renders an event on one readable line.
func describeEvent(env publish.Envelope) string {
	e := env.Data
	prev := "none"
	if e.PreviousHash.Valid {
		prev = fmt.Sprint(int64(e.PreviousHash.Hash))
	}
	var reasons []string
	for _, r := range e.Reasons {
		s := r.Kind.String() + " " + r.Topic
		switch {
		case r.Regex != "":
			s += fmt.Sprintf(" (regex %q)", r.Regex)
		case r.OldPartitions != 0 && r.NewPartitions != 0:
			s += fmt.Sprintf(" (%d->%d partitions)", r.OldPartitions, r.NewPartitions)
		case r.NewPartitions != 0:
			s += fmt.Sprintf(" (%d partitions)", r.NewPartitions)
		}
		reasons = append(reasons, s)
	}
	return fmt.Sprintf("%s rebalance-needed %s group %q: hash %s -> %d (%s) because %s [metadata offset %d]",
		env.Time.Format("15:04:05.000"), e.GroupType, e.GroupID, prev, int64(e.NewHash), e.HashScheme,
		strings.Join(reasons, ", "), e.MetadataOffset)
}

// envOr is the value of name in environ, or def when it is unset or empty.
func envOr(environ []string, name, def string) string {
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name && v != "" {
			return v
		}
	}
	return def
}
