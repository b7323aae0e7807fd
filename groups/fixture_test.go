package groups_test

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/internal/fixture"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixtureRecord is one record of a real-Kafka fixture: testdata/kafka-*/consumer-offsets.txt
// and streams-offsets.txt, lines of "partition<TAB>offset<TAB>key hex<TAB>value hex or null" (see the README
// beside each file for how it was captured).
type fixtureRecord struct {
	Partition, Offset string
	Key, Value        []byte // Value nil for a tombstone
}

// fixtureFiles are the consumer-offsets.txt of every release.
func fixtureFiles(tb testing.TB) []string {
	tb.Helper()
	var files []string
	for _, v := range fixture.Versions(tb) {
		files = append(files, fixture.ConsumerOffsets(tb, v))
	}
	return files
}

// allFixtureFiles are fixtureFiles and the streams-offsets.txt of every release.
func allFixtureFiles(tb testing.TB) []string {
	tb.Helper()
	files := fixtureFiles(tb)
	for _, v := range fixture.Versions(tb) {
		files = append(files, fixture.StreamsOffsets(tb, v))
	}
	return files
}

func readFixture(tb testing.TB, path string) []fixtureRecord {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []fixtureRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for line := 1; sc.Scan(); line++ {
		if sc.Text() == "" || strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 4 {
			tb.Fatalf("%s:%d: %d fields, want 4", path, line, len(fields))
		}
		r := fixtureRecord{Partition: fields[0], Offset: fields[1]}
		if r.Key, err = hex.DecodeString(fields[2]); err != nil {
			tb.Fatalf("%s:%d: key: %v", path, line, err)
		}
		if fields[3] != "null" {
			if r.Value, err = hex.DecodeString(fields[3]); err != nil {
				tb.Fatalf("%s:%d: value: %v", path, line, err)
			}
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// fixtureRecords returns the records of every fixture, for seeding FuzzRecord.
func fixtureRecords(tb testing.TB) []struct{ Key, Value []byte } {
	var out []struct{ Key, Value []byte }
	for _, path := range allFixtureFiles(tb) {
		for _, r := range readFixture(tb, path) {
			out = append(out, struct{ Key, Value []byte }{r.Key, r.Value})
		}
	}
	return out
}

// TestFixtures decodes every record captured from a real Kafka with zero errors,
// replays them into a State, and compares a readable summary with the golden file
// beside the fixture (go test ./groups -run TestFixtures -update rewrites it).
func TestFixtures(t *testing.T) {
	files := allFixtureFiles(t)
	for _, path := range files {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			recs := readFixture(t, path)
			var b bytes.Buffer
			fmt.Fprintf(&b, "# %s: %d records. Offset commits are counted, not listed.\n", filepath.ToSlash(path), len(recs))
			s := groups.NewState()
			commits := map[string]int{}
			types := map[groups.RecordType]int{}
			for _, r := range recs {
				rec, err := groups.Decode(r.Key, r.Value)
				if err != nil {
					t.Errorf("partition %s offset %s: %v\nkey   %x\nvalue %x", r.Partition, r.Offset, err, r.Key, r.Value)
					continue
				}
				types[rec.Type]++
				// Replay decodes again through the State's interning Decoder.
				ch, err := s.Replay(r.Key, r.Value)
				if err != nil {
					t.Errorf("partition %s offset %s: Replay: %v", r.Partition, r.Offset, err)
				}
				if rec.Type.IsOffsetCommit() {
					commits[r.Partition]++
					continue
				}
				fmt.Fprintf(&b, "%s/%s %s%s\n", r.Partition, r.Offset, rec.String(), describeChange(ch))
			}
			b.WriteString("\n# record types\n")
			for rt := groups.RecordType(0); rt <= 24; rt++ {
				if types[rt] > 0 {
					fmt.Fprintf(&b, "%s %d\n", rt, types[rt])
				}
			}
			b.WriteString("\n# offset commits per partition\n")
			for p := 0; p < 1000; p++ {
				if n := commits[fmt.Sprint(p)]; n > 0 {
					fmt.Fprintf(&b, "%d %d\n", p, n)
				}
			}
			b.WriteString("\n# state after replay\n")
			b.WriteString(s.String())
			golden(t, filepath.Join("testdata", filepath.Base(filepath.Dir(path)), summaryName[filepath.Base(path)]), b.Bytes())
		})
	}
}

// summaryName is the golden summary of each fixture file.
var summaryName = map[string]string{
	"consumer-offsets.txt": "summary.golden",
	"streams-offsets.txt":  "streams-summary.golden",
}

func describeChange(c groups.Change) string {
	var parts []string
	for _, f := range []struct {
		on   bool
		name string
	}{{c.Created, "created"}, {c.Removed, "removed"}, {c.Metadata, "metadata"}, {c.Subscription, "subscription"}} {
		if f.on {
			parts = append(parts, f.name)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " => " + strings.Join(parts, ",")
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update to rewrite it); got:\n%s", path, got)
	}
}

// TestFixturesReencode checks the groupstest encoder against Kafka: every fixture
// record whose value groups decodes completely re-encodes to Kafka's exact bytes.
// GroupMetadata is left out: its decoded form drops assignments and UserData.
func TestFixturesReencode(t *testing.T) {
	files := allFixtureFiles(t)
	for _, path := range files {
		checked := map[groups.RecordType]int{}
		for _, r := range readFixture(t, path) {
			rec, err := groups.Decode(r.Key, r.Value)
			if err != nil || rec.Type.IsOffsetCommit() || rec.Type == groups.GroupMetadata || (!rec.Tombstone && rec.Value == nil) {
				continue
			}
			k, v, err := groupstest.Encode(&rec)
			if err != nil {
				t.Errorf("%s %s/%s: %v", path, r.Partition, r.Offset, err)
				continue
			}
			if !bytes.Equal(k, r.Key) || !bytes.Equal(v, r.Value) {
				t.Errorf("%s %s/%s %v: re-encoded bytes differ\nkey   %x\nkafka %x\nvalue %x\nkafka %x", path, r.Partition, r.Offset, rec.Type, k, r.Key, v, r.Value)
			}
			checked[rec.Type]++
		}
		t.Logf("%s: re-encoded %v", path, checked)
	}
}

// TestFixtureStates replays every fixture and writes, beside the summary, each
// change of a group's derived state (Group.State) with the record that caused it:
// the coordinator's own sequence of assigning, reconciling and stable.
func TestFixtureStates(t *testing.T) {
	for _, path := range fixtureFiles(t) {
		t.Run(filepath.Base(filepath.Dir(path)), func(t *testing.T) {
			var b bytes.Buffer
			fmt.Fprintf(&b, "# %s: each change of a group's state, after the record that caused it.\n", filepath.ToSlash(path))
			s := groups.NewState()
			last := map[events.GroupKey]string{}
			for _, r := range readFixture(t, path) {
				rec, err := groups.Decode(r.Key, r.Value)
				if err != nil {
					t.Fatalf("partition %s offset %s: %v", r.Partition, r.Offset, err)
				}
				if rec.Type.IsOffsetCommit() {
					continue
				}
				s.Apply(&rec)
				k := rec.GroupKey()
				now := "removed"
				if g, ok := s.Group(k); ok {
					now = fmt.Sprintf("%s members=%d reconciling=%d epoch=%d target_assignment_epoch=%d",
						g.State(), g.NumMembers(), g.Reconciling(), g.Epoch, g.TargetAssignmentEpoch)
				}
				if now != last[k] {
					fmt.Fprintf(&b, "%s/%s %s %s: %s\n", r.Partition, r.Offset, k, rec.Type, now)
					last[k] = now
				}
			}
			golden(t, filepath.Join("testdata", filepath.Base(filepath.Dir(path)), "states.golden"), b.Bytes())
		})
	}
}

// TestFixturesStreamsTasks replays each release's streams fixture (a real Kafka Streams
// application): after each target or current assignment record of a member, the state
// holds that record's tasks, and once the member's records are deleted it holds none.
func TestFixturesStreamsTasks(t *testing.T) {
	for _, v := range fixture.Versions(t) {
		path := fixture.StreamsOffsets(t, v)
		s := groups.NewState()
		targets, currents := 0, 0
		for _, fr := range readFixture(t, path) {
			rec, err := groups.Decode(fr.Key, fr.Value)
			if err != nil {
				t.Fatalf("%s %s/%s: %v", path, fr.Partition, fr.Offset, err)
			}
			if _, err := s.Replay(fr.Key, fr.Value); err != nil {
				t.Fatalf("%s %s/%s: %v", path, fr.Partition, fr.Offset, err)
			}
			g, _ := s.Group(events.GroupKey{Type: events.StreamsGroup, ID: rec.GroupID})
			var a *groups.MemberAssignment
			if g != nil {
				if m, ok := g.Member(rec.MemberID); ok {
					a = m.Assignment
				}
			}
			at := fmt.Sprintf("%s %s/%s %s", path, fr.Partition, fr.Offset, rec.Type)
			switch v := rec.Value.(type) {
			case *groups.StreamsGroupTargetAssignmentMemberValue:
				targets++
				if a == nil || !a.HasTarget || a.Tasks == nil || !reflect.DeepEqual(a.Tasks.Target, tasksOf(v.ActiveTasks, v.StandbyTasks, v.WarmupTasks)) {
					t.Fatalf("%s: state holds %+v, want the record's tasks %+v", at, a, v)
				}
			case *groups.StreamsGroupCurrentMemberAssignmentValue:
				currents++
				if a == nil || !a.HasCurrent || a.Tasks == nil || !reflect.DeepEqual(a.Tasks.Assigned, tasksOf(v.ActiveTasks, v.StandbyTasks, v.WarmupTasks)) {
					t.Fatalf("%s: state holds %+v, want the record's tasks %+v", at, a, v)
				}
			}
			if rec.Tombstone && rec.Type == groups.StreamsGroupTargetAssignmentMember && a != nil && (a.HasTarget || a.Tasks != nil && a.Tasks.Target.Active != nil) {
				t.Fatalf("%s: the target tasks survived the tombstone: %+v", at, a)
			}
		}
		if targets == 0 || currents == 0 {
			t.Fatalf("%s: %d target and %d current assignment records, want some of each", path, targets, currents)
		}
	}
}

// tasksOf is the StreamsTasks the state keeps for tasks of the three kinds.
func tasksOf(active, standby, warmup []groups.TaskIDs) groups.StreamsTasks {
	strip := func(ts []groups.TaskIDs) []groups.TaskIDs {
		var out []groups.TaskIDs
		for _, t := range ts {
			out = append(out, groups.TaskIDs{SubtopologyID: t.SubtopologyID, Partitions: t.Partitions})
		}
		return out
	}
	return groups.StreamsTasks{Active: strip(active), Standby: strip(standby), Warmup: strip(warmup)}
}

// TestFixturesStreamsMemberState replays each release's streams fixture (bytes a real
// Kafka Streams member's coordinator wrote): after every current assignment record at
// the group's target assignment epoch whose state byte is Kafka's streams STABLE (1),
// the member is reconciled and the group, with one member, is stable (or not_ready
// while its topology is not validated), as Kafka's StreamsGroupCommand shows it. Streams records number member states from 1
// (streams.MemberState), consumer and share records from 0 (modern.MemberState).
func TestFixturesStreamsMemberState(t *testing.T) {
	for _, v := range fixture.Versions(t) {
		path := fixture.StreamsOffsets(t, v)
		s := groups.NewState()
		checked := 0
		for _, fr := range readFixture(t, path) {
			rec, err := groups.Decode(fr.Key, fr.Value)
			if err != nil {
				t.Fatalf("%s %s/%s: %v", path, fr.Partition, fr.Offset, err)
			}
			s.Apply(&rec)
			cur, ok := rec.Value.(*groups.StreamsGroupCurrentMemberAssignmentValue)
			if !ok {
				continue
			}
			at := fmt.Sprintf("%s %s/%s", path, fr.Partition, fr.Offset)
			if want := fr.Value[10]; int8(want) != int8(cur.State) { // version int16, two int32 epochs, then the state byte
				t.Fatalf("%s: decoded state %d, the record's byte is %d", at, cur.State, want)
			}
			g, _ := s.Group(events.GroupKey{Type: events.StreamsGroup, ID: rec.GroupID})
			if cur.State != groups.StreamsMemberStable || cur.MemberEpoch != g.TargetAssignmentEpoch {
				continue
			}
			checked++
			if cur.State.String() != "stable" {
				t.Errorf("%s: state %s, want stable", at, cur.State)
			}
			m, _ := g.Member(rec.MemberID)
			if !m.Assignment.ReconciledTo(g.TargetAssignmentEpoch) || g.Reconciling() != 0 ||
				g.State() != groups.StateStable && g.State() != groups.StateNotReady {
				t.Errorf("%s: member state %s reconciled=%v, group %s with %d reconciling; want stable, reconciled, 0",
					at, m.Assignment.State, m.Assignment.ReconciledTo(g.TargetAssignmentEpoch), g.State(), g.Reconciling())
			}
		}
		if checked == 0 {
			t.Errorf("%s: no current assignment record of a stable member at the target epoch", path)
		}
	}
}
