package whatif_test

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/scripttest"
	"github.com/kraftwatch/kraftwatch/whatif"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata/script/*.txt")

// TestScript runs the scripts in testdata/script (internal/scripttest; -update
// rewrites the expected output).
//
// Commands:
//
//	metadata               replay the input lines (metadata text records) into the image
//	groups                 apply the input lines (groupstest.ParseText) to the State
//	whatif [scheme=S]      evaluate the plan of the input lines:
//	                         move TOPIC PARTITION R1,R2 [from=R1,R2]
//	                         add-partitions TOPIC=N
//	                         delete-topic TOPIC
//	                         create-topic TOPIC partitions=N [rf=N]
//	                         set-rack BROKER=RACK
//	                         decommission BROKER
//	                       and print each affected group, hashes as #n in order of
//	                       appearance within the case
//	suggest BROKER         the rack-neutral plan that empties BROKER
//	order [scheme=S]       the moves of the input lines (as whatif's) in the order
//	                       to run them, with the groups reading each topic as the key
func TestScript(t *testing.T) {
	for _, f := range scripttest.Files(t, filepath.Join("testdata", "script")) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			h := &harness{img: image.Empty, st: groups.NewState()}
			scripttest.Run(t, f, *update, func(c scripttest.Case) []string { return h.run(t, c) })
		})
	}
}

type harness struct {
	img *image.Image
	st  *groups.State
}

func args(c scripttest.Case) map[string]string {
	m := make(map[string]string)
	for _, a := range c.Args {
		k, v, _ := strings.Cut(a, "=")
		m[k] = v
	}
	return m
}

func (h *harness) run(t *testing.T, c scripttest.Case) []string {
	t.Helper()
	switch c.Cmd {
	case "metadata":
		d := image.NewDelta(h.img)
		for _, l := range c.Input {
			rec, err := metadata.ParseText(l, metadata.ShortUUIDs)
			if err != nil {
				t.Fatalf("%s: %v", c.Pos, err)
			}
			if err := d.Replay(rec); err != nil {
				t.Fatalf("%s: %v", c.Pos, err)
			}
		}
		h.img, _ = d.Apply(image.Provenance{})
		return []string{fmt.Sprintf("%d topics, %d brokers", h.img.NumTopics(), h.img.NumBrokers())}
	case "groups":
		for _, l := range c.Input {
			rec, err := groupstest.ParseText(l)
			if err != nil {
				t.Fatalf("%s: %v", c.Pos, err)
			}
			h.st.Apply(&rec)
		}
		return []string{fmt.Sprintf("%d groups", h.st.Len())}
	case "whatif":
		p, err := parsePlan(c.Input)
		if err != nil {
			t.Fatalf("%s: %v", c.Pos, err)
		}
		res, err := whatif.Evaluate(h.img, h.st, args(c)["scheme"], p)
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		return format(res)
	case "order":
		p, err := parsePlan(c.Input)
		if err != nil {
			t.Fatalf("%s: %v", c.Pos, err)
		}
		readers := func(topic string) string { return fmt.Sprint(h.st.Subscribers(topic)) }
		o, err := whatif.Order(h.img, args(c)["scheme"], p.Moves, readers)
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		var out []string
		for _, m := range o.Neutral {
			out = append(out, fmt.Sprintf("neutral %s-%d -> %v", m.Topic, m.Partition, m.Replicas))
		}
		for _, m := range o.Changing {
			out = append(out, fmt.Sprintf("changing %s-%d -> %v", m.Topic, m.Partition, m.Replicas))
		}
		return out
	case "suggest":
		id, err := strconv.Atoi(c.Args[0])
		if err != nil {
			t.Fatalf("%s: %v", c.Pos, err)
		}
		s, err := whatif.SuggestDecommission(h.img, int32(id))
		if err != nil {
			return []string{"error: " + err.Error()}
		}
		return formatSuggestion(s)
	}
	t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
	return nil
}

func ids(s string) ([]int32, error) {
	var out []int32
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, int32(n))
	}
	return out, nil
}

func parsePlan(lines []string) (whatif.Plan, error) {
	var p whatif.Plan
	for _, l := range lines {
		f := strings.Fields(l)
		kv := func(s string) (string, int, error) {
			k, v, _ := strings.Cut(s, "=")
			n, err := strconv.Atoi(v)
			return k, n, err
		}
		switch f[0] {
		case "move":
			part, err := strconv.Atoi(f[2])
			if err != nil {
				return p, err
			}
			rs, err := ids(f[3])
			if err != nil {
				return p, err
			}
			m := whatif.Move{Topic: f[1], Partition: int32(part), Replicas: rs}
			if len(f) > 4 {
				if m.From, err = ids(strings.TrimPrefix(f[4], "from=")); err != nil {
					return p, err
				}
			}
			p.Moves = append(p.Moves, m)
		case "add-partitions":
			k, n, err := kv(f[1])
			if err != nil {
				return p, err
			}
			p.AddPartitions = append(p.AddPartitions, whatif.AddPartitions{Topic: k, Count: n})
		case "delete-topic":
			p.DeleteTopics = append(p.DeleteTopics, f[1])
		case "create-topic":
			nt := whatif.NewTopic{Name: f[1]}
			for _, a := range f[2:] {
				k, n, err := kv(a)
				if err != nil {
					return p, err
				}
				if k == "rf" {
					nt.ReplicationFactor = n
				} else {
					nt.Partitions = n
				}
			}
			p.CreateTopics = append(p.CreateTopics, nt)
		case "set-rack":
			b, r, _ := strings.Cut(f[1], "=")
			n, err := strconv.Atoi(b)
			if err != nil {
				return p, err
			}
			p.SetRacks = append(p.SetRacks, whatif.SetRack{Broker: int32(n), Rack: r})
		case "decommission":
			n, err := strconv.Atoi(f[1])
			if err != nil {
				return p, err
			}
			p.Decommission = append(p.Decommission, int32(n))
		default:
			return p, fmt.Errorf("unknown plan line %q", l)
		}
	}
	return p, nil
}

func format(r *whatif.Result) []string {
	labels := map[int64]string{}
	label := func(h int64) string {
		if h == 0 {
			return "0"
		}
		if l, ok := labels[h]; ok {
			return l
		}
		labels[h] = fmt.Sprintf("#%d", len(labels)+1)
		return labels[h]
	}
	out := []string{fmt.Sprintf("steps: %s", strings.Join(r.Steps, "; "))}
	for _, g := range r.Groups {
		out = append(out, fmt.Sprintf("%s/%s rebalances %d-%d hash %s -> %s", g.Type, g.ID, g.Min, g.Max, label(g.Hash), label(g.FinalHash)))
		for _, tr := range g.Transitions {
			out = append(out, fmt.Sprintf("  %s: %s -> %s %v", tr.Step, label(tr.From), label(tr.To), tr.Topics))
		}
		for _, ti := range g.Topics {
			out = append(out, fmt.Sprintf("  %s moved=%v rack-changing=%v: %s", ti.Topic, ti.Moved, ti.RackChanging, strings.Join(ti.Causes, "; ")))
		}
	}
	out = append(out, fmt.Sprintf("unaffected: %d", r.Unaffected))
	return out
}

func formatSuggestion(s *whatif.Suggestion) []string {
	var out []string
	for _, set := range []struct {
		name  string
		moves []whatif.Move
	}{{"neutral", s.Neutral}, {"changing", s.Changing}, {"stuck", s.Stuck}} {
		for _, m := range set.moves {
			out = append(out, fmt.Sprintf("%s %s-%d %v -> %v", set.name, m.Topic, m.Partition, m.From, m.Replicas))
		}
	}
	return out
}
