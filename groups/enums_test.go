package groups_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/groups"
)

// TestKafkaEnums compares groups' numbering of record types and member states with the
// group coordinator's own constants, as testdata/java/EnumProbe.java printed them from
// each release's jars into testdata/kafka-<version>/enums.txt (the command is in the
// probe). Streams member states are numbered from 1, consumer and share ones from 0: a
// renumbering in a later release fails here. Releases: every kafka-<version> directory
// holding an enums.txt; 4.1.1, 4.3.1 and 4.4.0 must be among them.
func TestKafkaEnums(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "kafka-*", "enums.txt"))
	seen := map[string]bool{}
	for _, path := range paths {
		version := strings.TrimPrefix(filepath.Base(filepath.Dir(path)), "kafka-")
		seen[version] = true
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			fs := strings.Fields(sc.Text())
			at := path + ":" + strconv.Itoa(line)
			switch {
			case len(fs) == 5 && fs[0] == "record":
				id, err := strconv.ParseInt(fs[2], 10, 16)
				if err != nil {
					t.Fatalf("%s: %v", at, err)
				}
				if got, want := groups.RecordType(id).String(), camel(fs[1]); got != want {
					t.Errorf("%s: Kafka's record type %d is %s; groups names it %s", at, id, want, got)
				}
				counts["record"]++
			case len(fs) == 4 && fs[0] == "member_state":
				v, err := strconv.ParseInt(fs[3], 10, 8)
				if err != nil {
					t.Fatalf("%s: %v", at, err)
				}
				var got string
				switch fs[1] {
				case "modern":
					got = groups.MemberState(v).String()
				case "streams":
					got = groups.StreamsMemberState(v).String()
				default:
					t.Fatalf("%s: unknown member state kind %q", at, fs[1])
				}
				if want := strings.ToLower(fs[2]); got != want {
					t.Errorf("%s: Kafka's %s member state %d is %s; groups reads it as %s", at, fs[1], v, want, got)
				}
				counts[fs[1]]++
			default:
				t.Fatalf("%s: unexpected line %q", at, sc.Text())
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if counts["record"] < 20 || counts["modern"] != 4 || counts["streams"] != 4 {
			t.Errorf("%s: %v; want every record type and 4 member states of each kind", path, counts)
		}
	}
	for _, v := range []string{"4.1.1", "4.3.1", "4.4.0"} {
		if !seen[v] {
			t.Errorf("no testdata/kafka-%s/enums.txt (run testdata/java/EnumProbe.java as its comment says)", v)
		}
	}
}

// camel turns Kafka's CONSUMER_GROUP_METADATA into ConsumerGroupMetadata.
func camel(s string) string {
	var b strings.Builder
	for _, w := range strings.Split(s, "_") {
		if w != "" {
			b.WriteString(w[:1] + strings.ToLower(w[1:]))
		}
	}
	return b.String()
}
