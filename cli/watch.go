package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const watchUsage = `usage: kraftwatch watch [--nats URL] [--prefix P] [--cluster ID] [--since DURATION | --from-seq N] [--core] [--json] [--count N]

Prints kraftwatch's events as they arrive, one line each (or the event's JSON with
--json). By default it reads every JetStream stream kraftwatch publishes to through an
ordered consumer: after a lost connection it resumes at the next stored event, so it
misses none, and it says on stderr when it loses and regains NATS. --since and
--from-seq replay stored events first; --core subscribes without JetStream (a server in
core mode; events published while disconnected are missed). It connects with the
KRAFTWATCH_NATS_* settings of kraftwatch run (user and password, token, creds file, TLS,
ping interval), so that it works wherever kraftwatch runs.
`

// Watch runs `kraftwatch watch` with the process environment environ (KRAFTWATCH_NATS_URL
// and KRAFTWATCH_SUBJECT_PREFIX give the defaults of --nats and --prefix) and natsOpts,
// the options `kraftwatch run` makes of the other NATS settings (credentials, TLS,
// keepalive). It prints events until interrupted or --count events were printed.
func Watch(args, environ []string, natsOpts []nats.Option, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("watch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), watchUsage); fs.PrintDefaults() }
	url := fs.String("nats", envOr(environ, "KRAFTWATCH_NATS_URL", nats.DefaultURL), "NATS server URLs, comma-separated")
	prefix := fs.String("prefix", envOr(environ, "KRAFTWATCH_SUBJECT_PREFIX", events.DefaultPrefix), "subject prefix")
	cluster := fs.String("cluster", "", "only this Kafka cluster id (default: every cluster)")
	since := fs.Duration("since", 0, "first replay the events stored in the last DURATION (e.g. 1h)")
	fromSeq := fs.Uint64("from-seq", 0, "first replay the cluster's stream from sequence N (needs --cluster)")
	core := fs.Bool("core", false, "plain core NATS subscription: no replay, no resume after a disconnect")
	asJSON := fs.Bool("json", false, "print each event's JSON as received")
	count := fs.Int("count", 0, "exit after this many events (0: run until interrupted)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	switch {
	case fs.NArg() != 0:
		fmt.Fprintf(stderr, "kraftwatch watch: unexpected argument %q\n", fs.Arg(0))
		return 2
	case *since < 0:
		fmt.Fprintln(stderr, "kraftwatch watch: --since must not be negative")
		return 2
	case *since != 0 && *fromSeq != 0:
		fmt.Fprintln(stderr, "kraftwatch watch: --since and --from-seq exclude each other")
		return 2
	case *fromSeq != 0 && *cluster == "":
		fmt.Fprintln(stderr, "kraftwatch watch: --from-seq needs --cluster (each cluster has its own stream)")
		return 2
	case *core && (*since != 0 || *fromSeq != 0):
		fmt.Fprintln(stderr, "kraftwatch watch: --core cannot replay (no --since or --from-seq)")
		return 2
	}
	root := *prefix
	if *cluster != "" {
		root += "." + events.EscapeToken(*cluster)
	}
	var mu sync.Mutex // serialises what the NATS callbacks and the consumers print on stderr
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "kraftwatch watch: "+format+"\n", args...)
	}
	var closing atomic.Bool // set before watch closes the connection itself
	opts := append([]nats.Option{nats.Name("kraftwatch watch"), nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			switch {
			case closing.Load():
			case err != nil:
				say("lost NATS: %v; reconnecting", err)
			default:
				say("lost NATS; reconnecting")
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { say("NATS back at %s", nc.ConnectedUrlRedacted()) })}, natsOpts...)
	nc, err := nats.Connect(*url, opts...)
	if err != nil {
		fmt.Fprintf(stderr, "kraftwatch watch: connecting to %s: %v (check --nats and the KRAFTWATCH_NATS_* settings)\n", *url, err)
		return 1
	}
	defer func() {
		closing.Store(true)
		nc.Close()
	}()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	msgs := make(chan watched, 1024)
	if *core {
		sub, err := nc.Subscribe(root+".>", func(m *nats.Msg) {
			select {
			case msgs <- watched{subject: m.Subject, data: m.Data}:
			case <-ctx.Done():
			}
		})
		if err != nil {
			fmt.Fprintf(stderr, "kraftwatch watch: %v\n", err)
			return 1
		}
		defer sub.Unsubscribe()
		say("listening on %s at %s (core NATS)", root+".>", nc.ConnectedUrlRedacted())
	} else {
		js, err := jetstream.New(nc)
		if err != nil {
			fmt.Fprintf(stderr, "kraftwatch watch: %v\n", err)
			return 1
		}
		f := &follower{js: js, root: root, out: msgs, say: say, consumers: map[string]jetstream.ConsumeContext{}}
		f.start = jetstream.OrderedConsumerConfig{FilterSubjects: []string{root + ".>"}, DeliverPolicy: jetstream.DeliverNewPolicy}
		switch {
		case *since > 0:
			t := time.Now().Add(-*since)
			f.start.DeliverPolicy, f.start.OptStartTime = jetstream.DeliverByStartTimePolicy, &t
		case *fromSeq > 0:
			f.start.DeliverPolicy, f.start.OptStartSeq = jetstream.DeliverByStartSequencePolicy, *fromSeq
		}
		go f.run(ctx)
		defer f.stop()
		say("following the streams of %s at %s", root+".>", nc.ConnectedUrlRedacted())
	}
	for seen := 0; *count == 0 || seen < *count; {
		select {
		case <-ctx.Done():
			return 0
		case m := <-msgs:
			if *asJSON {
				fmt.Fprintf(stdout, "%s\n", m.data)
				seen++
				continue
			}
			var line string
			if env, err := events.DecodeRebalanceNeeded(m.data); err == nil {
				line = describeEvent(env)
			} else if renv, rerr := events.DecodeGroupRebalanced(m.data); rerr == nil {
				line = describeRebalanced(renv)
			} else {
				say("%s: not a kraftwatch event: %v", m.subject, err)
				continue
			}
			if m.stream != "" {
				line += fmt.Sprintf(" [stream %s seq %d]", m.stream, m.seq)
			}
			fmt.Fprintln(stdout, line)
			seen++
		}
	}
	return 0
}

// watched is one event received, with its stream position when it came from JetStream.
type watched struct {
	subject, stream string
	seq             uint64
	data            []byte
}

// follower finds the streams that hold kraftwatch's events under root (one per Kafka
// cluster; kraftwatch may create one after watch started) and reads each through an
// ordered consumer, which re-creates itself after a disconnect at the sequence after
// the last one delivered.
type follower struct {
	js    jetstream.JetStream
	root  string
	start jetstream.OrderedConsumerConfig
	out   chan<- watched
	say   func(string, ...any)

	mu        sync.Mutex
	consumers map[string]jetstream.ConsumeContext // by stream name
}

// streamScan is how often the follower looks for new streams.
const streamScan = 2 * time.Second

func (f *follower) run(ctx context.Context) {
	waiting := false
	for scan := 0; ; scan++ {
		names, err := f.streams(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			f.say("listing streams: %v; retrying", err)
		case len(names) == 0 && !waiting:
			f.say("no stream holds %s yet; waiting for kraftwatch to create one", f.root+".>")
			waiting = true
		}
		for _, name := range names {
			// A stream that appears after the first scan holds only events stored
			// since watch started: read it from its start, so none is missed.
			if err := f.follow(ctx, name, scan > 0 && f.start.DeliverPolicy == jetstream.DeliverNewPolicy); err != nil {
				f.say("stream %s: %v; retrying", name, err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(streamScan):
		}
	}
}

// streams lists the streams to read under root, each cluster's events once: the streams
// capturing the internal subjects (kraftwatch's own, which stores the events under their
// public subjects), and the streams capturing the public subjects that source none of
// those nor a stream already followed (a stream made by an older version). kraftwatch's
// events stream, a copy of its own by sourcing, is skipped: after a leader change of the
// stream it copies, nats-server resumes the copy only after a retry backoff.
func (f *follower) streams(ctx context.Context) ([]string, error) {
	list := func(subject string) ([]string, error) {
		var names []string
		l := f.js.StreamNames(ctx, jetstream.WithStreamListSubject(subject))
		for name := range l.Name() {
			names = append(names, name)
		}
		return names, l.Err()
	}
	names, err := list(events.InternalPrefix + "." + f.root + ".>")
	if err != nil {
		return nil, err
	}
	public, err := list(f.root + ".>")
	if err != nil {
		return nil, err
	}
	for _, name := range public {
		if slices.Contains(names, name) {
			continue
		}
		srcs, err := f.sources(ctx, name)
		if err != nil {
			return nil, err
		}
		if slices.ContainsFunc(srcs, func(s string) bool { return slices.Contains(names, s) || f.following(s) }) {
			continue // a copy of a stream read already
		}
		names = append(names, name)
	}
	return names, nil
}

// sources returns the names of the streams stream name sources.
func (f *follower) sources(ctx context.Context, name string) ([]string, error) {
	s, err := f.js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, src := range s.CachedInfo().Config.Sources {
		if src != nil {
			out = append(out, src.Name)
		}
	}
	return out, nil
}

func (f *follower) following(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.consumers[name]
	return ok
}

func (f *follower) follow(ctx context.Context, name string, all bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.consumers[name]; ok {
		return nil
	}
	stream, err := f.js.Stream(ctx, name)
	if err != nil {
		return err
	}
	cfg := f.start
	if all {
		cfg.DeliverPolicy = jetstream.DeliverAllPolicy
	}
	cons, err := stream.OrderedConsumer(ctx, cfg)
	if err != nil {
		return err
	}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		w := watched{subject: m.Subject(), stream: name, data: m.Data()}
		if md, err := m.Metadata(); err == nil {
			w.seq = md.Sequence.Stream
		}
		select {
		case f.out <- w:
		case <-ctx.Done():
		}
	}, jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
		if !errors.Is(err, jetstream.ErrNoHeartbeat) && !strings.Contains(err.Error(), "connection closed") {
			f.say("stream %s: %v", name, err)
		}
	}))
	if err != nil {
		return err
	}
	f.consumers[name] = cc
	f.say("reading stream %s", name)
	return nil
}

func (f *follower) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cc := range f.consumers {
		cc.Stop()
	}
}

// describeEvent renders an event on one readable line.
func describeEvent(env events.Envelope[events.RebalanceNeeded]) string {
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

// describeRebalanced renders a rebalanced event on one readable line.
func describeRebalanced(env events.Envelope[events.GroupRebalanced]) string {
	e := env.Data
	prev := "?"
	if e.PreviousEpoch != nil {
		prev = fmt.Sprint(*e.PreviousEpoch)
	}
	var causes []string
	for _, c := range e.Causes {
		s := c.Kind.String()
		if c.MemberID != "" {
			s += " " + c.MemberID
		}
		if p := c.PredictedBy; p != nil {
			s += fmt.Sprintf(" (predicted by %s %d ms before)", p.EventID, p.LeadTimeMs)
		}
		causes = append(causes, s)
	}
	var assignment string
	if e.AssignmentEpoch != nil {
		// Kafka 4.3+: one new target assignment, with the bumps folded into it.
		assignment = fmt.Sprintf(" (one assignment of %d epoch bumps", len(e.EpochBumps))
		if e.PartitionsMoved != nil {
			assignment += fmt.Sprintf(", %d partitions moved", *e.PartitionsMoved)
		}
		assignment += ")"
	}
	return fmt.Sprintf("%s rebalanced %s group %q: epoch %s -> %d%s because %s [__consumer_offsets %d/%d]",
		env.Time.Format("15:04:05.000"), e.GroupType, e.GroupID, prev, e.NewEpoch, assignment, strings.Join(causes, ", "),
		e.ConsumerOffsets.Partition, e.ConsumerOffsets.Offset)
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
