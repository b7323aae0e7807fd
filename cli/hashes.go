package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/kafkaconn"
	"github.com/kraftwatch/kraftwatch/observer"
)

// Hashes runs `kraftwatch hashes`: it prints the topic hashes of a metadata log dir (or of the controllers'
// metadata log, with --bootstrap-controller) and, with --bootstrap, the group hashes of every group in
// __consumer_offsets.
func Hashes(args []string, stdout, stderr io.Writer) int { return HashesEnv(args, nil, stdout, stderr) }

// HashesEnv is Hashes with --bootstrap-controller's TLS and SASL settings read from
// environ (KRAFTWATCH_CONTROLLER_*).
func HashesEnv(args, environ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hashes", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scheme := fs.String("scheme", hashcache.DefaultScheme, "murmur3 or kafka")
	bootstrap := fs.String("bootstrap", "", "Kafka bootstrap servers: also print group hashes")
	controllers := fs.String("bootstrap-controller", "", controllerFlagHelp)
	if code, ok := parseArgs(fs, args, "usage: kraftwatch hashes [--scheme murmur3|kafka] [--bootstrap HOSTS] METADATA_DIR | --bootstrap-controller HOSTS",
		func() bool { return oneSource(fs.NArg(), *controllers) == nil }); !ok {
		return code
	}
	im, state, cache, err := inspectInputs(fs.Arg(0), *controllers, environ, *bootstrap, *scheme, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kraftwatch hashes: %v\n", err)
		return 1
	}
	cl := hashcache.ImageCluster{Image: im}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "TOPIC\tTOPIC_ID\tPARTITIONS\tHASH (%s)\n", *scheme)
	for _, t := range im.SortedTopics() {
		h, _ := cache.TopicHash(cl, t.Name())
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", t.Name(), t.ID(), t.NumPartitions(), h)
	}
	tw.Flush()
	if state == nil {
		return 0
	}
	fmt.Fprintln(stdout)
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "GROUP_TYPE\tGROUP\tTOPICS\tHASH (%s)\tCOORDINATOR_EPOCH\tCOORDINATOR_METADATA_HASH\n", *scheme)
	tracker := groups.NewTracker(state, cache)
	tracker.Sync(im)
	for _, k := range state.Keys() {
		g, _ := state.Group(k)
		epoch, stored := "-", "-"
		if g.HasMetadata {
			epoch, stored = fmt.Sprint(g.Epoch), fmt.Sprint(g.MetadataHash)
		}
		h, _ := tracker.Hash(k)
		fmt.Fprintf(tw, "%s\t%s\t%v\t%d\t%s\t%s\n", k.Type, k.ID, tracker.Topics(k), h, epoch, stored)
	}
	tw.Flush()
	return 0
}

// Verify runs `kraftwatch verify`: it compares the kafka-scheme hash of every group whose coordinator keeps a
// MetadataHash fresh with that hash, and exits 1 listing the groups that differ. Which
// groups are compared is the rule set of the engine's coordinator check
// (groups.CheckCoordinatorHash); every other group gets a SKIPPED line saying why. The
// coordinator refreshes its hash lazily (on a heartbeat after a metadata change), so run
// it on a quiet cluster or run it twice.
func Verify(args []string, stdout, stderr io.Writer) int { return VerifyEnv(args, nil, stdout, stderr) }

// VerifyEnv is Verify with --bootstrap-controller's TLS and SASL settings read from
// environ (KRAFTWATCH_CONTROLLER_*).
func VerifyEnv(args, environ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	bootstrap := fs.String("bootstrap", "", "Kafka bootstrap servers (required)")
	controllers := fs.String("bootstrap-controller", "", controllerFlagHelp)
	if code, ok := parseArgs(fs, args, "usage: kraftwatch verify --bootstrap HOSTS METADATA_DIR | --bootstrap-controller HOSTS",
		func() bool { return oneSource(fs.NArg(), *controllers) == nil && *bootstrap != "" }); !ok {
		return code
	}
	im, state, cache, err := inspectInputs(fs.Arg(0), *controllers, environ, *bootstrap, hashcache.SchemeKafka, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "kraftwatch verify: %v\n", err)
		return 1
	}
	tracker := groups.NewTracker(state, cache)
	tracker.Sync(im)
	_, bad := verifyGroups(stdout, im, state, tracker)
	if bad > 0 {
		return 1
	}
	return 0
}

// verifyGroups writes a MISMATCH line for every group whose kafka-scheme hash differs
// from its coordinator's stored MetadataHash, a SKIPPED line with the reason for every
// group groups.CheckCoordinatorHash does not compare, and a summary; it returns how
// many groups were compared and how many differ.
func verifyGroups(w io.Writer, im *image.Image, state *groups.State, tracker *groups.Tracker) (checked, bad int) {
	skipped := 0
	for _, k := range state.Keys() {
		g, _ := state.Group(k)
		topics := tracker.Topics(k)
		res := groups.CheckCoordinatorHash(g, im, topics, func() int64 { h, _ := tracker.Hash(k); return h })
		switch {
		case res.Skip != groups.CheckCompared:
			skipped++
			fmt.Fprintf(w, "SKIPPED %s group %q: %s\n", k.Type, k.ID, res.Skip)
		case !res.Agrees:
			checked++
			bad++
			fmt.Fprintf(w, "MISMATCH %s group %q: kraftwatch %d, coordinator %d (epoch %d), topics %v\n",
				k.Type, k.ID, res.Hash, g.MetadataHash, g.Epoch, topics)
		default:
			checked++
		}
	}
	fmt.Fprintf(w, "%d group(s) checked against the coordinator's MetadataHash, %d mismatch(es), %d skipped\n", checked, bad, skipped)
	return checked, bad
}

// parseArgs parses args with fs, whose usage line is usage; valid checks the parsed
// arguments. It returns ok to go on, or the exit code: 0 for --help (usage and flags on
// fs's output), 2 for bad usage.
func parseArgs(fs *flag.FlagSet, args []string, usage string, valid func() bool) (int, bool) {
	fs.Usage = func() { fmt.Fprintln(fs.Output(), usage); fs.PrintDefaults() }
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0, false
	case err != nil:
		return 2, false
	case !valid():
		fs.Usage()
		return 2, false
	}
	return 0, true
}

// readerStall is how long hashes and verify wait for a __consumer_offsets partition, or
// the partition list, that cannot be read before giving up with the reason. A variable
// only so that tests need not wait it out.
var readerStall = 10 * time.Second

// inspectInputs loads the metadata log dir (or, with controllers, the metadata log of
// the controller quorum) and, when bootstrap is set, every group of __consumer_offsets
// up to its current end.
func inspectInputs(dir, controllers string, environ []string, bootstrap, scheme string, stderr io.Writer) (*image.Image, *groups.State, *hashcache.Cache, error) {
	return inspectInputsWatching(dir, controllers, environ, bootstrap, scheme, stderr, nil)
}

// inspectInputsWatching is inspectInputs calling applied, when not nil, after each
// __consumer_offsets record is replayed into the state, in order.
func inspectInputsWatching(dir, controllers string, environ []string, bootstrap, scheme string, stderr io.Writer,
	applied func(m groups.Message, rec groups.Record, s *groups.State)) (*image.Image, *groups.State, *hashcache.Cache, error) {
	cache, err := hashcache.New(hashcache.Config{Scheme: scheme})
	if err != nil {
		return nil, nil, nil, err
	}
	var loaded *observer.Loaded
	if controllers != "" {
		loaded, _, err = loadFromControllers(controllers, environ, stderr)
	} else {
		loaded, err = observer.Load(observer.PartitionDir(dir), nil)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if bootstrap == "" {
		return loaded.Image, nil, cache, nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	reader, err := groups.NewReader(groups.ReaderConfig{Brokers: kafkaconn.SplitHosts(bootstrap), StallAfter: readerStall,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, nil, nil, err
	}
	state := groups.NewState()
	done := make(chan error, 1)
	readCtx, stopRead := context.WithCancel(ctx)
	var decodeErrors int
	go func() {
		dec := groups.NewDecoder()
		done <- reader.Run(readCtx, groups.EachRecord(func(m groups.Message) error {
			rec, err := dec.Decode(m.Key, m.Value)
			if err != nil {
				decodeErrors++
				return nil
			}
			state.Apply(&rec)
			if applied != nil {
				applied(m, rec, state)
			}
			return nil
		}))
	}()
	health := time.NewTicker(250 * time.Millisecond)
	defer health.Stop()
wait:
	for {
		select {
		case <-reader.CaughtUp():
			break wait
		case err := <-done:
			stopRead()
			return nil, nil, nil, fmt.Errorf("reading __consumer_offsets: %w", err)
		case <-health.C:
			if err := reader.Health(); err != nil {
				stopRead()
				<-done
				return nil, nil, nil, fmt.Errorf("reading __consumer_offsets from %s: %w", bootstrap, err)
			}
		case <-ctx.Done():
			stopRead()
			return nil, nil, nil, fmt.Errorf("reading __consumer_offsets: %w", ctx.Err())
		}
	}
	stopRead()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return nil, nil, nil, err
	}
	if decodeErrors > 0 {
		fmt.Fprintf(stderr, "kraftwatch: %d __consumer_offsets record(s) could not be decoded and were skipped\n", decodeErrors)
	}
	return loaded.Image, state, cache, nil
}
