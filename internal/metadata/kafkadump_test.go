package metadata

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/fixture"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// This test holds our decoding of every record of every fixture beside Kafka's own:
// each <file>.dump.txt next to a fixture is the output of
// kafka-dump-log --cluster-metadata-decoder on it. Fields are matched by name
// ignoring case ("topicId" is TopicID); a field Kafka does not print (a tagged field
// at its default) must hold its default here.

var dumpLine = regexp.MustCompile(`^\| offset: (\d+) .*? headerKeys: \[\] (payload: |LeaderChange: |KRaftVersion |KRaftVoters |SnapshotHeader |SnapshotFooter )(\{.*\})$`)

type dumped struct {
	kind string // "payload: " or a control record name
	json string
}

func readDump(t *testing.T, path string) map[int64]dumped {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("Kafka's dump of a fixture: %v (make fixtures writes it)", err)
	}
	defer f.Close()
	out := map[int64]dumped{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "Error at") {
			t.Errorf("%s: Kafka itself failed: %s", path, line)
		}
		m := dumpLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		off, _ := strconv.ParseInt(m[1], 10, 64)
		out[off] = dumped{strings.TrimSpace(strings.TrimSuffix(m[2], ":")), m[3]}
	}
	return out
}

// generic turns a decoded value into the shape encoding/json gives Kafka's JSON:
// maps with lower-cased keys, UUIDs as base64url strings.
func generic(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return generic(v.Elem())
	case reflect.Struct:
		m := map[string]any{}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				m[strings.ToLower(f.Name)] = generic(v.Field(i))
			}
		}
		return m
	case reflect.Array: // UUID
		u := v.Interface().(UUID)
		return base64.RawURLEncoding.EncodeToString(u[:])
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return base64.StdEncoding.EncodeToString(v.Bytes())
		}
		s := make([]any, v.Len())
		for i := range s {
			s[i] = generic(v.Index(i))
		}
		return s
	case reflect.Bool:
		return v.Bool()
	case reflect.String:
		return v.String()
	case reflect.Float32, reflect.Float64:
		return v.Float()
	default:
		return json.Number(strconv.FormatInt(v.Convert(reflect.TypeFor[int64]()).Int(), 10))
	}
}

// lower re-keys Kafka's JSON with lower-cased keys, numbers kept as json.Number.
func lower(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			m[strings.ToLower(k)] = lower(e)
		}
		return m
	case []any:
		for i := range x {
			x[i] = lower(x[i])
		}
		return x
	}
	return v
}

func parseJSON(t *testing.T, s string) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("bad JSON in dump: %v: %s", err, s)
	}
	return lower(v)
}

// defaultFor is what a field Kafka omitted must hold here.
func defaultFor(rec any, field string) any {
	switch {
	case field == "leader":
		return json.Number("-2") // PartitionChangeRecord
	case field == "leaderrecoverystate" && reflect.TypeOf(rec) == reflect.TypeFor[*PartitionChangeRecord]():
		return json.Number("-1")
	}
	return "default"
}

func isDefault(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case json.Number:
		return x == "0"
	case bool:
		return !x
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	}
	return false
}

func compareDump(t *testing.T, where string, kafka, ours any, rec any) {
	t.Helper()
	km, ok1 := kafka.(map[string]any)
	om, ok2 := ours.(map[string]any)
	if !ok1 || !ok2 {
		if !reflect.DeepEqual(kafka, ours) && !(isDefault(kafka) && isDefault(ours)) {
			t.Errorf("%s: kafka %v, ours %v", where, kafka, ours)
		}
		return
	}
	for k, kv := range km {
		ov, ok := om[k]
		if !ok {
			t.Errorf("%s: Kafka has field %q, we do not (%v)", where, k, kv)
			continue
		}
		if ks, ok := kv.([]any); ok {
			os, _ := ov.([]any)
			if len(ks) != len(os) {
				t.Errorf("%s.%s: kafka %v, ours %v", where, k, kv, ov)
				continue
			}
			for i := range ks {
				compareDump(t, where+"."+k+"["+strconv.Itoa(i)+"]", ks[i], os[i], rec)
			}
			continue
		}
		compareDump(t, where+"."+k, kv, ov, rec)
	}
	for k, ov := range om {
		if _, ok := km[k]; ok {
			continue
		}
		if d := defaultFor(rec, k); d != "default" {
			if ov != d {
				t.Errorf("%s.%s: Kafka omits it (default %v), ours %v", where, k, d, ov)
			}
		} else if !isDefault(ov) {
			t.Errorf("%s.%s: Kafka omits it, ours %v", where, k, ov)
		}
	}
}

// controlGeneric reshapes our control records like Kafka's JSON.
func controlGeneric(c recordbatch.ControlRecord) any {
	switch x := c.(type) {
	case *recordbatch.LeaderChangeMessage:
		ids := func(s []int32) []any {
			out := []any{}
			for _, id := range s {
				out = append(out, map[string]any{"voterid": json.Number(strconv.Itoa(int(id)))})
			}
			return out
		}
		return map[string]any{"version": json.Number(strconv.Itoa(int(x.Version))), "leaderid": json.Number(strconv.Itoa(int(x.LeaderID))),
			"voters": ids(x.Voters), "grantingvoters": ids(x.GrantingVoters)}
	case *recordbatch.VotersRecord:
		g := generic(reflect.ValueOf(x)).(map[string]any)
		for _, v := range g["voters"].([]any) {
			vm := v.(map[string]any)
			vm["kraftversionfeature"] = map[string]any{"minsupportedversion": vm["minsupportedversion"], "maxsupportedversion": vm["maxsupportedversion"]}
			delete(vm, "minsupportedversion")
			delete(vm, "maxsupportedversion")
		}
		return g
	}
	return generic(reflect.ValueOf(c))
}

func TestAgainstKafkaDumpLog(t *testing.T) {
	n := 0
	files := append(fixture.MetadataFiles(t, "*.log"), fixture.MetadataFiles(t, "*.checkpoint")...)
	for _, path := range files {
		dump := readDump(t, path+".dump.txt")
		in, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		_, err = recordbatch.Scan(in, func(b recordbatch.Batch) error {
			it := b.Iter()
			for it.Next() {
				r := it.Record()
				off := it.Offset()
				d, ok := dump[off]
				if !ok {
					t.Errorf("%s offset %d: not in Kafka's dump", path, off)
					continue
				}
				seen++
				where := path + "@" + strconv.FormatInt(off, 10)
				if b.IsControl() {
					c, err := recordbatch.DecodeControl(r.Key, r.Value)
					if err != nil {
						t.Errorf("%s: %v", where, err)
						continue
					}
					compareDump(t, where, parseJSON(t, d.json), controlGeneric(c), c)
					continue
				}
				rec, v, err := Decode(r.Value)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				kafka := parseJSON(t, d.json).(map[string]any)
				if kafka["type"] != rec.Type().EnumName() || kafka["version"] != json.Number(strconv.Itoa(int(v))) {
					t.Errorf("%s: kafka %v v%v, ours %s v%d", where, kafka["type"], kafka["version"], rec.Type().EnumName(), v)
				}
				compareDump(t, where, kafka["data"], generic(reflect.ValueOf(rec)), rec)
			}
			return it.Err()
		})
		if err != nil {
			t.Errorf("%s: %v", path, err)
		}
		if seen != len(dump) {
			t.Errorf("%s: compared %d records, Kafka's dump has %d", path, seen, len(dump))
		}
		n += seen
	}
	if n == 0 {
		t.Fatal("no record compared with Kafka's kafka-dump-log")
	}
	t.Logf("%d records match Kafka's kafka-dump-log", n)
}
