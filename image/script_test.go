package image

import (
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/scripttest"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata scripts")

// Script tests: each file in testdata/scripts is a list of cases in the style of
// cockroachdb/datadriven, run by internal/scripttest:
//
//	command arg=value ...
//	input lines
//	----
//	expected output
//	<blank line>
//
// Commands:
//
//	replay [at=N ts=N]  replay the input records (metadata text form), one per line;
//	                with at, line i is stamped with offset N+i-1 and time ts (Delta.At)
//	stamps          print the stamps of the topics, brokers and deleted topics given as
//	                arguments (topic=NAME broker=ID deleted=ID)
//	apply [offset=N epoch=N ts=N]   publish, print the changes
//	image           print the current image
//	reset           start again from the empty image
//	save NAME       remember the current image
//	diff NAME       print Diff(saved image NAME, current image)
//
// UUIDs are written as short names (t1, foo-id, ...) that map to UUIDs holding the
// name's bytes; go test -update rewrites the expected output.

func TestScripts(t *testing.T) {
	for _, f := range scripttest.Files(t, filepath.Join("testdata", "scripts")) {
		t.Run(filepath.Base(f), func(t *testing.T) { runScript(t, f, true) })
		// The same output record by record, without the bulk path for new topics.
		t.Run(filepath.Base(f)+"/no-bulk", func(t *testing.T) {
			if *update {
				t.Skip("rewriting")
			}
			runScript(t, f, false)
		})
	}
}

func runScript(t *testing.T, path string, bulk bool) {
	d := newDelta(Empty, bulk)
	saved := map[string]*Image{}
	scripttest.Run(t, path, *update, func(c scripttest.Case) []string {
		return runCase(t, c, &d, saved, bulk)
	})
}

func runCase(t *testing.T, c scripttest.Case, d **Delta, saved map[string]*Image, bulk bool) []string {
	t.Helper()
	args := map[string]string{}
	for _, a := range c.Args {
		k, v, _ := strings.Cut(a, "=")
		args[k] = v
	}
	num := func(k string, def int64) int64 {
		if s, ok := args[k]; ok {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				t.Fatalf("%s: %s=%s: %v", c.Pos, k, s, err)
			}
			return n
		}
		return def
	}
	switch c.Cmd {
	case "replay":
		var out []string
		for i, l := range c.Input {
			rec, err := metadata.ParseText(l, metadata.ShortUUIDs)
			if err != nil {
				t.Fatalf("%s: input line %d: %v", c.Pos, i+1, err)
			}
			if _, ok := args["at"]; ok {
				(*d).At(num("at", 0)+int64(i), num("ts", 0))
			}
			if err := (*d).Replay(rec); err != nil {
				out = append(out, metadata.ShortenUUIDs(fmt.Sprintf("line %d: %v", i+1, err)))
			}
		}
		if (*d).InTransaction() {
			out = append(out, "(in transaction)")
		}
		if len(out) == 0 {
			out = []string{"ok"}
		}
		return out
	case "apply":
		_, ch := (*d).Apply(Provenance{Offset: num("offset", 0), Epoch: int32(num("epoch", 0)), Timestamp: num("ts", 0)})
		return changeLines(ch)
	case "image":
		return imageLines((*d).Base())
	case "stamps":
		return stampLines(t, (*d).Base(), c.Args)
	case "reset":
		*d = newDelta(Empty, bulk)
		return []string{"ok"}
	case "save":
		saved[c.Args[0]] = (*d).Base()
		return []string{"ok"}
	case "diff":
		old, ok := saved[c.Args[0]]
		if !ok {
			t.Fatalf("%s: no saved image %q", c.Pos, c.Args[0])
		}
		return changeLines(Diff(old, (*d).Base()))
	}
	t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
	return nil
}

func stampLines(t *testing.T, im *Image, args []string) []string {
	t.Helper()
	st := func(s Stamp) string {
		if !s.Known() {
			return "unknown"
		}
		return fmt.Sprintf("%d@%d", s.Offset, s.Timestamp)
	}
	var out []string
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "topic":
			tp, ok := im.TopicByName(v)
			if !ok {
				out = append(out, fmt.Sprintf("topic %s: none", v))
				continue
			}
			out = append(out, fmt.Sprintf("topic %s created=%s partitions-added=%s replicas-changed=%s",
				v, st(tp.Created()), st(tp.PartitionsAdded()), st(tp.ReplicasChanged())))
		case "broker":
			id, _ := strconv.Atoi(v)
			if s, ok := im.BrokerRackChanged(int32(id)); ok {
				out = append(out, fmt.Sprintf("broker %d rack-changed=%s", id, st(s)))
			} else {
				out = append(out, fmt.Sprintf("broker %d: none", id))
			}
		case "deleted":
			id, err := metadata.ShortUUIDs.Parse(v)
			if err != nil {
				t.Fatal(err)
			}
			if dt, ok := im.DeletedTopic(id); ok {
				out = append(out, fmt.Sprintf("deleted %s name=%s partitions=%d created=%s deleted=%s",
					v, dt.Name, dt.Partitions, st(dt.Created), st(dt.Deleted)))
			} else {
				out = append(out, fmt.Sprintf("deleted %s: none", v))
			}
		default:
			t.Fatalf("stamps: unknown argument %q", a)
		}
	}
	return out
}

func changeLines(ch *Changes) []string {
	if ch.Empty() {
		return []string{"no changes"}
	}
	s := ch.String()
	// Short names for ids in the output.
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, metadata.ShortenUUIDs(l))
	}
	return out
}

func ints(s []int32) string {
	p := make([]string, len(s))
	for i, v := range s {
		p[i] = strconv.Itoa(int(v))
	}
	return "[" + strings.Join(p, ",") + "]"
}

// imageLines prints an image: provenance, features, brokers, topics and partitions.
func imageLines(im *Image) []string {
	var out []string
	p := im.Provenance()
	out = append(out, fmt.Sprintf("provenance offset=%d epoch=%d ts=%d", p.Offset, p.Epoch, p.Timestamp))
	feats := im.Features()
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range feats {
			if !yield(k) {
				return
			}
		}
	})
	if len(names) > 0 {
		var fs []string
		for _, n := range names {
			fs = append(fs, fmt.Sprintf("%s=%d", n, feats[n]))
		}
		out = append(out, "features "+strings.Join(fs, " "))
	}
	for _, b := range im.Brokers() {
		l := fmt.Sprintf("broker %d epoch=%d incarnation=%s", b.ID, b.Epoch, metadata.FormatShortUUID(b.IncarnationID))
		if b.HasRack {
			l += " rack=" + strconv.Quote(b.Rack)
		}
		if b.Fenced {
			l += " fenced"
		}
		if b.InControlledShutdown {
			l += " in-controlled-shutdown"
		}
		if len(b.LogDirs) > 0 {
			var ds []string
			for _, u := range b.LogDirs {
				ds = append(ds, metadata.FormatShortUUID(u))
			}
			l += " dirs=[" + strings.Join(ds, ",") + "]"
		}
		out = append(out, l)
	}
	for _, t := range im.SortedTopics() {
		out = append(out, fmt.Sprintf("topic %s id=%s partitions=%d", t.Name(), metadata.FormatShortUUID(t.ID()), t.NumPartitions()))
		for p := range t.Partitions() {
			l := fmt.Sprintf("  %d replicas=%s isr=%s leader=%d leaderEpoch=%d partitionEpoch=%d",
				p.ID(), ints(p.Replicas()), ints(p.ISR()), p.Leader(), p.LeaderEpoch(), p.PartitionEpoch())
			for _, x := range []struct {
				name string
				l    []int32
			}{{"removing", p.RemovingReplicas()}, {"adding", p.AddingReplicas()}, {"elr", p.ELR()}, {"lastKnownElr", p.LastKnownELR()}} {
				if len(x.l) > 0 {
					l += " " + x.name + "=" + ints(x.l)
				}
			}
			if p.LeaderRecoveryState() != 0 {
				l += fmt.Sprintf(" leaderRecoveryState=%d", p.LeaderRecoveryState())
			}
			if p.HasDirectories() {
				var ds []string
				for _, u := range p.Directories() {
					ds = append(ds, metadata.FormatShortUUID(u))
				}
				l += " dirs=[" + strings.Join(ds, ",") + "]"
			}
			out = append(out, l)
		}
	}
	if im.NumTopics() == 0 && im.NumBrokers() == 0 {
		out = append(out, "(empty)")
	}
	out = append(out, fmt.Sprintf("totals topics=%d partitions=%d brokers=%d", im.NumTopics(), im.NumPartitions(), im.NumBrokers()))
	return out
}
