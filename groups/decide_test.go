package groups_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/scripttest"
)

// TestDecideScripts runs the scripts in testdata/decide. Each is a list of cases in
// the style of cockroachdb/datadriven, run by internal/scripttest:
//
//	command arg=value ...
//	input lines
//	----
//	expected output
//	<blank line>
//
// Lines starting with '#' between cases are comments. go test -update (the flag of
// fixture_test.go) rewrites the expected output. Commands:
//
//	new [scheme=kafka|murmur3]   empty image, State, cache and Tracker (kafka by default)
//	metadata [offset=N]          replay the input metadata records (text form, ids as
//	                             short names) as one update; print the image changes,
//	                             then the decisions of Tracker.Metadata
//	group [tracker=off]          replay the input group records (see groupstest.ParseText), one
//	                             by one; print each decision of Tracker.Group (with
//	                             tracker=off the Tracker is not told, as while
//	                             catching up before Sync)
//	sync                         Tracker.Sync against the current image
//	seed TYPE GROUP HASH         Tracker.Seed (HASH in hex)
//	hashes                       every group: its hash and the topics it covers
//
// Decisions print as Decision.String, with topic ids as their short names. After
// every command each tracked group's hash is checked against one computed from
// scratch (State.SubscribedTopics and a new cache).
func TestDecideScripts(t *testing.T) {
	for _, f := range scripttest.Files(t, filepath.Join("testdata", "decide")) {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runDecideScript(t, f) })
	}
}

func runDecideScript(t *testing.T, path string) {
	w := newWorld(t, hashcache.SchemeKafka)
	scripttest.Run(t, path, *update, func(c scripttest.Case) []string {
		got := w.run(t, c)
		w.check(t, c.Pos)
		if len(got) == 0 {
			got = []string{"ok"}
		}
		return got
	})
}

// world is what a script drives: an image built by a Delta, a State, and a Tracker.
type world struct {
	delta   *image.Delta
	state   *groups.State
	cache   *hashcache.Cache
	tracker *groups.Tracker
	// behind is set while the Tracker was not told of some group changes.
	behind bool
}

// check compares the tracked hash of every group with one computed from scratch.
func (w *world) check(t *testing.T, pos string) {
	t.Helper()
	if w.behind {
		return
	}
	im := w.tracker.Image()
	names := groups.NameSet{}
	for tp := range im.Topics() {
		names[tp.Name()] = struct{}{}
	}
	fresh, err := hashcache.New(hashcache.Config{Scheme: w.cache.Scheme().Name()})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range w.state.Keys() {
		h, ok := w.tracker.Hash(k)
		if !ok {
			continue
		}
		topics := w.state.SubscribedTopics(k, names)
		if got := w.tracker.Topics(k); !slices.Equal(got, topics) {
			t.Errorf("%s: %s: tracked topics %q, from scratch %q", pos, k, got, topics)
		}
		if want := fresh.GroupHash(hashcache.ImageCluster{Image: im}, topics); h != want {
			t.Errorf("%s: %s: tracked hash %016x, from scratch %016x", pos, k, uint64(h), uint64(want))
		}
	}
}

func newWorld(t testing.TB, scheme string) *world {
	t.Helper()
	c, err := hashcache.New(hashcache.Config{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	s := groups.NewState()
	return &world{delta: image.NewDelta(image.Empty), state: s, cache: c, tracker: groups.NewTracker(s, c)}
}

func (w *world) run(t *testing.T, c scripttest.Case) []string {
	t.Helper()
	kv := map[string]string{}
	var plain []string
	for _, a := range c.Args {
		if k, v, ok := strings.Cut(a, "="); ok {
			kv[k] = v
		} else {
			plain = append(plain, a)
		}
	}
	switch c.Cmd {
	case "new":
		scheme := kv["scheme"]
		if scheme == "" {
			scheme = hashcache.SchemeKafka
		}
		*w = *newWorld(t, scheme)
		return []string{"scheme " + scheme}
	case "metadata":
		var out []string
		for i, l := range c.Input {
			rec, err := metadata.ParseText(l, metadata.ShortUUIDs)
			if err != nil {
				t.Fatalf("%s: input line %d: %v", c.Pos, i+1, err)
			}
			if err := w.delta.Replay(rec); err != nil {
				t.Fatalf("%s: input line %d: %v", c.Pos, i+1, err)
			}
		}
		off, _ := strconv.ParseInt(kv["offset"], 10, 64)
		im, ch := w.delta.Apply(image.Provenance{Offset: off})
		if ch.Empty() {
			out = append(out, "image: no changes")
		}
		for l := range strings.SplitSeq(strings.TrimRight(ch.String(), "\n"), "\n") {
			if l != "" {
				out = append(out, "image: "+metadata.ShortenUUIDs(l))
			}
		}
		ds := w.tracker.Metadata(im, ch)
		if !slices.IsSortedFunc(ds, func(a, b groups.Decision) int { return a.Group.Compare(b.Group) }) {
			t.Errorf("%s: decisions not sorted by group:\n%s", c.Pos, strings.Join(decisionLines(ds), "\n"))
		}
		return append(out, decisionLines(ds)...)
	case "group":
		var ds []groups.Decision
		for i, l := range c.Input {
			rec, err := groupstest.ParseText(l)
			if err != nil {
				t.Fatalf("%s: input line %d: %v", c.Pos, i+1, err)
			}
			k, v, err := groupstest.Encode(&rec)
			if err != nil {
				t.Fatalf("%s: input line %d: encode: %v", c.Pos, i+1, err)
			}
			ch, err := w.state.Replay(k, v)
			if err != nil {
				t.Fatalf("%s: input line %d: replay: %v", c.Pos, i+1, err)
			}
			if kv["tracker"] == "off" {
				w.behind = true
				continue
			}
			if d, ok := w.tracker.Group(ch); ok {
				ds = append(ds, d)
			}
		}
		if kv["tracker"] == "off" {
			return []string{"(tracker not told)"}
		}
		return decisionLines(ds)
	case "sync":
		w.behind = false
		return decisionLines(w.tracker.Sync(w.delta.Base()))
	case "seed":
		if len(plain) != 3 {
			t.Fatalf("%s: seed TYPE GROUP HASH", c.Pos)
		}
		typ, err := groupType(plain[0])
		if err != nil {
			t.Fatalf("%s: %v", c.Pos, err)
		}
		h, err := strconv.ParseUint(plain[2], 16, 64)
		if err != nil {
			t.Fatalf("%s: %v", c.Pos, err)
		}
		w.tracker.Seed(events.GroupKey{Type: typ, ID: plain[1]}, int64(h))
		return nil
	case "hashes":
		var out []string
		for _, k := range w.state.Keys() {
			h, ok := w.tracker.Hash(k)
			if !ok {
				out = append(out, k.String()+" (no hash)")
				continue
			}
			out = append(out, fmt.Sprintf("%s %016x topics=[%s]", k, uint64(h), strings.Join(w.tracker.Topics(k), " ")))
		}
		return append(out, fmt.Sprintf("tracked %d of %d groups", w.tracker.Len(), w.state.Len()))
	}
	t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
	return nil
}

func decisionLines(ds []groups.Decision) []string {
	if len(ds) == 0 {
		return []string{"no decisions"}
	}
	var out []string
	for _, d := range ds {
		out = append(out, "decision "+metadata.ShortenUUIDs(d.String()))
	}
	return out
}

func groupType(s string) (events.GroupType, error) {
	for _, t := range []events.GroupType{events.ClassicGroup, events.ConsumerGroup, events.ShareGroup, events.StreamsGroup} {
		if t.String() == s {
			return t, nil
		}
	}
	return events.UnknownGroup, fmt.Errorf("unknown group type %q", s)
}
