package engine

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/datadriven"

	kwevents "github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/observer"
	"github.com/kraftwatch/kraftwatch/publish"
)

// TestScripts runs the engine scripts in testdata/scripts, in the style of etcd raft's
// rafttest: each script drives a whole Engine (Run's goroutine included) with metadata
// updates and __consumer_offsets records, restarts it, and shows the events it hands
// to the publisher and the group state a Query sees. The format is
// cockroachdb/datadriven's; go test ./engine -run TestScripts -rewrite rewrites the
// expected output, which is the specification: read the diff.
//
// Each script runs in a testing/synctest bubble: time is the bubble's fake clock
// (2000-01-01T00:00:00Z at the start, printed as +DURATION from there), and after every
// input the script waits (synctest.Wait) until the engine has handled it, with no
// sleeps. The publisher is scriptPublisher, an in-memory stand-in that stores every
// event once per id, as JetStream's duplicate window does.
//
// Commands:
//
//	start [scheme=murmur3|kafka] [include=RE] [exclude=RE] [rebalanced=true|false]
//	        a new Engine: it is given the current image and every record so far, as the
//	        observer and the groups reader give them at start-up, and must get in sync
//	stop    end Run; records and metadata keep accumulating for the next start
//	restart [args of start]   stop, then start (with the last start's args unless given)
//	metadata [offset=N]
//	        the input lines are __cluster_metadata records (text form, topic ids as short
//	        names) of one batch at the next offsets (or from N), appended now; prints
//	        the image's changes. A running engine gets the update at once.
//	record [partition=N]
//	        the input lines are __consumer_offsets records (groupstest.ParseText) at the
//	        partition's next offsets, timestamped now; hash=kafka:T1,T2 stands for the
//	        kafka-scheme hash of those topics in the current image (what a coordinator
//	        stores), hash=#N for the hash printed as #N; "raw KEYHEX VALUEHEX" is a
//	        record given as bytes
//	advance DURATION   move the clock on (the engine's timers fire)
//	events  the events enqueued since the last events command, numbered e1, e2, ...
//	query TYPE GROUP   the group as Query sees it: state, hash, topics and history
//	stats   Engine.Stats
//
// Hashes print as #1, #2, ... in order of first appearance in a script (0 as 0), so
// that a reader sees which events chain (previous_hash is the last event's new_hash)
// without 16 hex digits.
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "scripts", "*.txt"))
	if len(files) == 0 {
		t.Fatal("no scripts in testdata/scripts")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := newHarness(t)
				t.Cleanup(h.stop)
				datadriven.RunTest(t, f, h.run)
			})
		})
	}
}

// harness is what a script drives: the logs an engine reads, and the engine.
type harness struct {
	t     testing.TB
	epoch time.Time // the bubble's start

	img      *image.Image
	nextMeta int64
	log      []groups.Message // every __consumer_offsets record so far, in order
	next     map[int32]int64  // per partition: the next record's offset

	pub     *scriptPublisher
	startAs []string // the last start's args
	eng     *Engine
	cancel  context.CancelFunc
	done    chan error

	hashes map[int64]int // alias numbers of the hashes printed so far
}

func newHarness(t testing.TB) *harness {
	return &harness{t: t, epoch: time.Now(), img: image.Empty, nextMeta: 1, next: map[int32]int64{},
		pub: newScriptPublisher("cluster-1"), hashes: map[int64]int{}}
}

func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	var out []string
	switch d.Cmd {
	case "start":
		out = h.start(t, d)
	case "stop":
		if h.eng == nil {
			t.Fatalf("%s: not running", d.Pos)
		}
		h.stop()
		out = []string{"stopped"}
	case "restart":
		if h.eng == nil {
			t.Fatalf("%s: not running", d.Pos)
		}
		h.stop()
		out = h.start(t, d)
	case "metadata":
		out = h.metadata(t, d)
	case "record":
		out = h.records(t, d)
	case "advance":
		if len(d.CmdArgs) != 1 {
			t.Fatalf("%s: advance DURATION", d.Pos)
		}
		dur, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
		time.Sleep(dur)
		synctest.Wait()
		out = []string{"now " + h.at(time.Now())}
	case "events":
		out = h.events()
	case "query":
		out = h.query(t, d)
	case "stats":
		out = h.stats(t, d)
	default:
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	}
	return strings.Join(out, "\n")
}

// start runs a new engine on the logs so far and waits until it is in sync.
func (h *harness) start(t *testing.T, d *datadriven.TestData) []string {
	if h.eng != nil {
		t.Fatalf("%s: already running", d.Pos)
	}
	if d.Cmd == "start" || len(d.CmdArgs) > 0 {
		h.startAs = nil
		for _, a := range d.CmdArgs {
			h.startAs = append(h.startAs, a.String())
		}
	}
	cfg := Config{ClusterID: h.pub.cluster, Scheme: hashcache.SchemeMurmur3, Publisher: h.pub, Rebalanced: true}
	for _, a := range h.startAs {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "scheme":
			cfg.Scheme = v
		case "include":
			cfg.Include = regexp.MustCompile(`^(?:` + v + `)$`)
		case "exclude":
			cfg.Exclude = regexp.MustCompile(`^(?:` + v + `)$`)
		case "rebalanced":
			cfg.Rebalanced = v == "true"
		default:
			t.Fatalf("%s: unknown argument %q", d.Pos, a)
		}
	}
	caughtUp := make(chan struct{})
	cfg.GroupsCaughtUp = caughtUp
	e, err := New(cfg)
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	h.pub.scheme = cfg.Scheme
	ctx, cancel := context.WithCancel(context.Background())
	h.eng, h.cancel, h.done = e, cancel, make(chan error, 1)
	go func() { h.done <- e.Run(ctx) }()
	e.OnMetadata(observer.Update{Image: h.img, Provenance: h.img.Provenance()})
	for _, m := range h.log {
		if err := e.OnGroupRecord(m); err != nil {
			t.Fatalf("%s: %v", d.Pos, err)
		}
	}
	close(caughtUp)
	synctest.Wait()
	if err := e.Ready(); err != nil {
		return []string{"not ready: " + err.Error()}
	}
	return []string{fmt.Sprintf("in sync: %d groups, %d records, metadata offset %d, scheme %s",
		e.Stats().Groups, len(h.log), h.img.Provenance().Offset, cfg.Scheme)}
}

// stop ends the running engine, if any.
func (h *harness) stop() {
	if h.eng == nil {
		return
	}
	h.cancel()
	if err := <-h.done; !errors.Is(err, context.Canceled) {
		h.t.Errorf("engine Run returned %v, want context.Canceled", err)
	}
	h.eng = nil
}

func (h *harness) metadata(t *testing.T, d *datadriven.TestData) []string {
	if d.HasArg("offset") {
		d.ScanArgs(t, "offset", &h.nextMeta)
	}
	now := time.Now().UnixMilli()
	delta := image.NewDelta(h.img)
	lines := inputLines(d)
	first := h.nextMeta
	unit := &observer.Unit{}
	for i, l := range lines {
		rec, err := metadata.ParseText(l, metadata.ShortUUIDs)
		if err != nil {
			t.Fatalf("%s: input line %d: %v", d.Pos, i+1, err)
		}
		unit.Entries = append(unit.Entries, observer.Entry{Offset: h.nextMeta, Record: rec})
		delta.At(h.nextMeta, now)
		if err := delta.Replay(rec); err != nil {
			t.Fatalf("%s: input line %d: %v", d.Pos, i+1, err)
		}
		h.nextMeta++
	}
	im, ch := delta.Apply(image.Provenance{Offset: h.nextMeta - 1, Epoch: 1, Timestamp: now})
	h.img = im
	out := []string{fmt.Sprintf("offsets %d-%d at %s", first, h.nextMeta-1, h.at(time.UnixMilli(now)))}
	for l := range strings.SplitSeq(strings.TrimRight(ch.String(), "\n"), "\n") {
		if l != "" {
			out = append(out, "image: "+metadata.ShortenUUIDs(l))
		}
	}
	if h.eng != nil {
		h.eng.OnMetadata(observer.Update{Image: im, Changes: ch, Provenance: im.Provenance(), Unit: unit, Units: 1})
		synctest.Wait()
	}
	return out
}

var hashArg = regexp.MustCompile(`\bhash=(kafka:\S*|#\d+)`)

func (h *harness) records(t *testing.T, d *datadriven.TestData) []string {
	var partition int32
	if d.HasArg("partition") {
		d.ScanArgs(t, "partition", &partition)
	}
	now := time.Now()
	var first int64 = -1
	for i, l := range inputLines(d) {
		l = hashArg.ReplaceAllStringFunc(l, func(s string) string {
			return "hash=" + strconv.FormatUint(uint64(h.hashOf(t, strings.TrimPrefix(s, "hash="))), 16)
		})
		var key, value []byte
		var rec groups.Record
		var err error
		if raw, ok := strings.CutPrefix(l, "raw "); ok {
			// raw KEYHEX VALUEHEX: a record as bytes (a newer Kafka's).
			k, v, _ := strings.Cut(strings.TrimSpace(raw), " ")
			if key, err = hex.DecodeString(k); err == nil {
				value, err = hex.DecodeString(v)
			}
		} else if rec, err = groupstest.ParseText(l); err == nil {
			key, value, err = groupstest.Encode(&rec)
		}
		if err != nil {
			t.Fatalf("%s: input line %d: %v", d.Pos, i+1, err)
		}
		if rec.Tombstone {
			value = nil
		}
		m := groups.Message{Partition: int(partition), Offset: h.next[partition], Key: key, Value: value, Time: now}
		h.next[partition]++
		if first < 0 {
			first = m.Offset
		}
		h.log = append(h.log, m)
		if h.eng != nil {
			if err := h.eng.OnGroupRecord(m); err != nil {
				t.Fatalf("%s: %v", d.Pos, err)
			}
		}
	}
	if h.eng != nil {
		synctest.Wait()
	}
	return []string{fmt.Sprintf("offsets %d/%d-%d at %s", partition, first, h.next[partition]-1, h.at(now))}
}

// hashOf resolves a hash argument of a record: kafka:T1,T2 or #N.
func (h *harness) hashOf(t *testing.T, s string) int64 {
	if topics, ok := strings.CutPrefix(s, "kafka:"); ok {
		c, err := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
		if err != nil {
			t.Fatal(err)
		}
		names := strings.Split(topics, ",")
		slices.Sort(names)
		return c.GroupHash(hashcache.ImageCluster{Image: h.img}, names)
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(s, "#"))
	for v, a := range h.hashes {
		if a == n {
			return v
		}
	}
	t.Fatalf("no hash #%d printed yet", n)
	return 0
}

// hash gives a hash's alias.
func (h *harness) hash(v int64) string {
	if v == 0 {
		return "0"
	}
	a, ok := h.hashes[v]
	if !ok {
		a = len(h.hashes) + 1
		h.hashes[v] = a
	}
	return "#" + strconv.Itoa(a)
}

// at prints a time as the duration since the bubble's start.
func (h *harness) at(tm time.Time) string {
	if tm.IsZero() {
		return "(none)"
	}
	return "+" + tm.Sub(h.epoch).String()
}

func (h *harness) events() []string {
	h.pub.mu.Lock()
	defer h.pub.mu.Unlock()
	var out []string
	for _, s := range h.pub.enqueued[h.pub.shown:] {
		out = append(out, h.eventLines(s)...)
	}
	h.pub.shown = len(h.pub.enqueued)
	if len(out) == 0 {
		return []string{"no events"}
	}
	return out
}

// eventLines prints one enqueued event; pub.mu is held.
func (h *harness) eventLines(s enqueued) []string {
	if s.dup > 0 {
		kind, key := "rebalance_needed", kwevents.GroupKey{}
		if s.needed != nil {
			key = s.needed.Key()
		} else {
			kind, key = "rebalanced", s.rebalanced.Key()
		}
		return []string{fmt.Sprintf("%s %s/%s again: the id of e%d, not stored again", kind, key.Type, key.ID, s.dup)}
	}
	var out []string
	if ev := s.needed; ev != nil {
		prev := "none"
		if ev.PreviousHash.Valid {
			prev = h.hash(int64(ev.PreviousHash.Hash))
		}
		l := fmt.Sprintf("e%d rebalance_needed %s/%s %s -> %s metadata_offset=%d coordinator_epoch=%d", s.seq, ev.GroupType,
			ev.GroupID, prev, h.hash(int64(ev.NewHash)), ev.MetadataOffset, ev.CoordinatorEpoch)
		if c := ev.ConsumerOffsets; c != nil {
			l += fmt.Sprintf(" consumer_offsets=%d/%d", c.Partition, c.Offset)
		}
		out = append(out, l+" time="+h.at(ev.Time))
		for _, r := range ev.Reasons {
			l := "  " + r.Kind.String() + " " + r.Topic
			if r.TopicID != "" {
				l += " id=" + metadata.ShortenUUIDs(r.TopicID)
			}
			if r.OldTopicID != "" {
				l += " old_id=" + metadata.ShortenUUIDs(r.OldTopicID)
			}
			if r.OldPartitions != 0 || r.NewPartitions != 0 {
				l += fmt.Sprintf(" partitions=%d->%d", r.OldPartitions, r.NewPartitions)
			}
			if r.Regex != "" {
				l += fmt.Sprintf(" regex=%q", r.Regex)
			}
			if r.MetadataOffset != 0 {
				l += fmt.Sprintf(" metadata_offset=%d", r.MetadataOffset)
			}
			if !r.Time.IsZero() {
				l += " time=" + h.at(r.Time)
			}
			out = append(out, l)
		}
		var ts []string
		for _, c := range ev.Topics {
			ts = append(ts, fmt.Sprintf("%s(%s,%d)", c.Name, metadata.ShortenUUIDs(c.TopicID), c.Partitions))
		}
		if len(ts) == 0 {
			ts = []string{"(none)"}
		}
		l = "  topics: " + strings.Join(ts, " ")
		if ev.TopicsTruncated {
			l += " (truncated)"
		}
		out = append(out, l)
	} else {
		ev := s.rebalanced
		prev := "none"
		if ev.PreviousEpoch != nil {
			prev = strconv.Itoa(int(*ev.PreviousEpoch))
		}
		out = append(out, fmt.Sprintf("e%d rebalanced %s/%s epoch %s -> %d metadata_hash=%s consumer_offsets=%d/%d time=%s",
			s.seq, ev.GroupType, ev.GroupID, prev, ev.NewEpoch, h.hash(int64(ev.MetadataHash)),
			ev.ConsumerOffsets.Partition, ev.ConsumerOffsets.Offset, h.at(ev.Time)))
		if a := ev.AssignmentEpoch; a != nil {
			l := fmt.Sprintf("  assignment %d epoch_bumps=%v", *a, ev.EpochBumps)
			if !ev.AssignmentTime.IsZero() {
				l += " assignment_time=" + h.at(ev.AssignmentTime)
			}
			if n := ev.PartitionsMoved; n != nil {
				l += fmt.Sprintf(" partitions_moved=%d", *n)
				for _, m := range ev.MovedPartitions {
					l += fmt.Sprintf(" %s(%s):%v", m.Topic, metadata.ShortenUUIDs(m.TopicID), m.Partitions)
				}
			}
			out = append(out, l)
		}
		for _, c := range ev.Causes {
			out = append(out, "  "+h.causeLine(c))
		}
	}
	if s.err != nil {
		out = append(out, "  INVALID: "+s.err.Error())
	}
	return out
}

// causeLine prints a rebalanced event's cause; pub.mu is held.
func (h *harness) causeLine(c kwevents.RebalanceCause) string {
	l := c.Kind.String()
	add := func(k, v string) {
		if v != "" {
			l += " " + k + "=" + v
		}
	}
	list := func(ss []string) string {
		if len(ss) == 0 {
			return ""
		}
		return "[" + strings.Join(ss, " ") + "]"
	}
	add("member", c.MemberID)
	add("topics", list(c.SubscribedTopicNames))
	if c.SubscribedTopicRegex != "" {
		add("regex", strconv.Quote(c.SubscribedTopicRegex))
	}
	add("previous_topics", list(c.PreviousSubscribedTopicNames))
	if c.PreviousSubscribedTopicRegex != "" {
		add("previous_regex", strconv.Quote(c.PreviousSubscribedTopicRegex))
	}
	if c.Regex != "" {
		add("resolved_regex", strconv.Quote(c.Regex))
	}
	add("added", list(c.TopicsAdded))
	add("removed", list(c.TopicsRemoved))
	add("previous_value", c.PreviousValue)
	add("new_value", c.NewValue)
	if c.Epoch != 0 {
		add("epoch", strconv.Itoa(int(c.Epoch)))
	}
	if c.PreviousHash != nil && c.NewHash != nil {
		l += " " + h.hash(int64(*c.PreviousHash)) + " -> " + h.hash(int64(*c.NewHash))
	}
	if p := c.PredictedBy; p != nil {
		by := p.EventID
		if n, ok := h.pub.byID[p.EventID]; ok {
			by = fmt.Sprintf("e%d", n)
		}
		l += fmt.Sprintf(" predicted_by=%s (new_hash %s, %d ms before)", by, h.hash(int64(p.NewHash)), p.LeadTimeMs)
	}
	return l
}

func (h *harness) query(t *testing.T, d *datadriven.TestData) []string {
	if len(d.CmdArgs) != 2 || h.eng == nil {
		t.Fatalf("%s: query TYPE GROUP, while running", d.Pos)
	}
	typ, err := kwevents.ParseGroupType(d.CmdArgs[0].Key)
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	k := kwevents.GroupKey{Type: kwevents.GroupType(typ), ID: d.CmdArgs[1].Key}
	var out []string
	err = h.eng.Query(context.Background(), func(v *View) {
		g, ok := v.State.Group(k)
		if !ok {
			out = append(out, "no such group")
		} else {
			l := "state=" + g.State().String()
			if g.HasMetadata {
				l += fmt.Sprintf(" epoch=%d metadata_hash=%s", g.Epoch, h.hash(g.MetadataHash))
			}
			out = append(out, l)
			for _, m := range g.Members() {
				l := "member " + m.ID + " topics=[" + strings.Join(m.SubscribedTopicNames, " ") + "]"
				if m.SubscribedTopicRegex != "" {
					l += " regex=" + strconv.Quote(m.SubscribedTopicRegex)
				}
				out = append(out, l)
			}
		}
		if hash, ok := v.Tracker.Hash(k); ok {
			out = append(out, fmt.Sprintf("hash=%s topics=[%s]", h.hash(hash), strings.Join(v.Tracker.Topics(k), " ")))
		}
		h.pub.mu.Lock()
		defer h.pub.mu.Unlock()
		for _, ev := range v.History.Events(k) {
			id := ev.ID
			if n, ok := h.pub.byID[ev.ID]; ok {
				id = fmt.Sprintf("e%d", n)
			}
			l := fmt.Sprintf("history %s %s time=%s coordinator_epoch=%d", id, ev.Type, h.at(ev.Time), ev.CoordinatorEpoch)
			if ev.HasNewHash {
				prev := "none"
				if ev.HasPreviousHash {
					prev = h.hash(ev.PreviousHash)
				}
				l += fmt.Sprintf(" %s -> %s", prev, h.hash(ev.NewHash))
			}
			out = append(out, l+": "+ev.Summary)
		}
	})
	if err != nil {
		t.Fatalf("%s: %v", d.Pos, err)
	}
	return out
}

func (h *harness) stats(t *testing.T, d *datadriven.TestData) []string {
	if h.eng == nil {
		t.Fatalf("%s: stats while running", d.Pos)
	}
	s := h.eng.Stats()
	l := fmt.Sprintf("groups=%d decisions=%d", s.Groups, s.Decisions)
	for k, n := range s.DecisionReasons {
		if n > 0 {
			l += fmt.Sprintf(" %s=%d", kwevents.ReasonKind(k), n)
		}
	}
	return []string{l, fmt.Sprintf("decode_errors=%d unknown_tags=%d coordinator_checked=%d coordinator_mismatches=%d",
		s.DecodeErrors, s.UnknownTags, s.CoordinatorChecked, s.CoordinatorMismatches)}
}

// inputLines returns the non-empty lines of a command's input.
func inputLines(d *datadriven.TestData) []string {
	var out []string
	for l := range strings.SplitSeq(d.Input, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

// scriptPublisher is the engine's Publisher in scripts: it stores the events it is
// given in memory, once per id (a second event with an id already stored is noted and
// dropped, as JetStream's duplicate window and the publisher's read-back do), and
// answers LoadLastPublished from the events stored. It validates each event as a
// subscriber would.
type scriptPublisher struct {
	cluster string
	scheme  string // set by the harness before each start

	mu       sync.Mutex
	enqueued []enqueued
	shown    int
	seq      int            // events stored
	byID     map[string]int // the number (seq) of the stored event with an id
	last     map[kwevents.GroupKey]publish.Last
}

type enqueued struct {
	seq        int // its number among the stored events (e1, e2, ...); 0 for a duplicate
	needed     *kwevents.RebalanceNeeded
	rebalanced *kwevents.GroupRebalanced
	dup        int // the number of the stored event with the same id; 0 when stored
	err        error
}

func newScriptPublisher(cluster string) *scriptPublisher {
	return &scriptPublisher{cluster: cluster, byID: map[string]int{}, last: map[kwevents.GroupKey]publish.Last{}}
}

func (p *scriptPublisher) store(id string, e enqueued) {
	if n, ok := p.byID[id]; ok {
		e.dup = n
	} else {
		p.seq++
		e.seq = p.seq
		p.byID[id] = p.seq
	}
	p.enqueued = append(p.enqueued, e)
}

func (p *scriptPublisher) Enqueue(_ context.Context, ev kwevents.RebalanceNeeded) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.ClusterID == "" {
		ev.ClusterID = p.cluster
	}
	if ev.HashScheme == "" {
		ev.HashScheme = p.scheme
	}
	id := ev.MsgID()
	_, dup := p.byID[id]
	p.store(id, enqueued{needed: &ev, err: ev.Validate()})
	if !dup {
		p.last[ev.Key()] = publish.Last{Hash: int64(ev.NewHash), HashScheme: ev.HashScheme, Cause: ev.Cause, MsgID: id,
			Seq: uint64(p.seq), Time: ev.Time, Topics: ev.Topics, TopicsTruncated: ev.TopicsTruncated}
	}
	return nil
}

func (p *scriptPublisher) EnqueueRebalanced(_ context.Context, ev kwevents.GroupRebalanced) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.ClusterID == "" {
		ev.ClusterID = p.cluster
	}
	p.store(ev.MsgID(), enqueued{rebalanced: &ev, err: ev.Validate()})
	return nil
}

func (p *scriptPublisher) Ready() bool { return true }

func (p *scriptPublisher) LoadLastPublished(context.Context) (map[kwevents.GroupKey]publish.Last, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make(map[kwevents.GroupKey]publish.Last, len(p.last))
	for k, l := range p.last {
		out[k] = l
	}
	return out, nil
}

// Superseded and TakeSuperseded: the script publisher stores every event, so none is
// ever superseded.
func (p *scriptPublisher) Superseded() <-chan struct{}                        { return nil }
func (p *scriptPublisher) TakeSuperseded() map[kwevents.GroupKey]publish.Last { return nil }
