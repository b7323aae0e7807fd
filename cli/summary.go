package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// Summary is the JSON form of an image (with --json).
type Summary struct {
	Source    string           `json:"source"`
	Offset    int64            `json:"offset"`
	Epoch     int32            `json:"epoch"`
	Timestamp int64            `json:"timestamp"`
	Features  map[string]int16 `json:"features"`
	Brokers   []BrokerSummary  `json:"brokers"`
	Topics    []TopicSummary   `json:"topics"`
}

// BrokerSummary is one broker; Rack is null for a broker without a rack.
type BrokerSummary struct {
	ID     int32   `json:"id"`
	Rack   *string `json:"rack"`
	Fenced bool    `json:"fenced"`
}

// TopicSummary is one topic.
type TopicSummary struct {
	Name       string             `json:"name"`
	ID         string             `json:"id"`
	Partitions []PartitionSummary `json:"partitions"`
}

// PartitionSummary is one partition.
type PartitionSummary struct {
	Partition int32   `json:"partition"`
	Replicas  []int32 `json:"replicas"`
	Leader    int32   `json:"leader"`
	ISR       []int32 `json:"isr"`
}

func summarize(source string, im *image.Image) Summary {
	p := im.Provenance()
	s := Summary{Source: source, Offset: p.Offset, Epoch: p.Epoch, Timestamp: p.Timestamp,
		Features: im.Features(), Brokers: []BrokerSummary{}, Topics: []TopicSummary{}}
	for _, b := range im.Brokers() {
		bs := BrokerSummary{ID: b.ID, Fenced: b.Fenced}
		if b.HasRack {
			r := b.Rack
			bs.Rack = &r
		}
		s.Brokers = append(s.Brokers, bs)
	}
	slices.SortFunc(s.Brokers, func(a, b BrokerSummary) int { return int(a.ID) - int(b.ID) })
	for _, t := range im.SortedTopics() {
		ts := TopicSummary{Name: t.Name(), ID: t.ID().String(), Partitions: []PartitionSummary{}}
		for p := range t.Partitions() {
			ts.Partitions = append(ts.Partitions, PartitionSummary{Partition: p.ID(),
				Replicas: slices.Clone(p.Replicas()), Leader: p.Leader(), ISR: slices.Clone(p.ISR())})
		}
		slices.SortFunc(ts.Partitions, func(a, b PartitionSummary) int { return int(a.Partition) - int(b.Partition) })
		s.Topics = append(s.Topics, ts)
	}
	return s
}

func (d *dumper) summary(path, source string, im *image.Image) error {
	s := summarize(source, im)
	if d.json {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(d.out, "%s\n", b)
		return err
	}
	w := d.out
	fmt.Fprintf(w, "%s\n", path)
	fmt.Fprintf(w, "source: %s\n", source)
	fmt.Fprintf(w, "offset: %d epoch: %d timestamp: %d\n", s.Offset, s.Epoch, s.Timestamp)
	features := make([]string, 0, len(s.Features))
	for k, v := range s.Features {
		features = append(features, fmt.Sprintf("%s=%d", k, v))
	}
	slices.Sort(features)
	fmt.Fprintf(w, "features: %s\n", strings.Join(features, " "))
	fmt.Fprintf(w, "brokers: %d\n", len(s.Brokers))
	for _, b := range s.Brokers {
		rack := "(none)"
		if b.Rack != nil {
			rack = *b.Rack
		}
		fenced := ""
		if b.Fenced {
			fenced = " fenced"
		}
		fmt.Fprintf(w, "  broker %d rack %s%s\n", b.ID, rack, fenced)
	}
	fmt.Fprintf(w, "topics: %d\n", len(s.Topics))
	for _, t := range s.Topics {
		fmt.Fprintf(w, "  topic %s id %s partitions %d\n", t.Name, t.ID, len(t.Partitions))
		for _, p := range t.Partitions {
			fmt.Fprintf(w, "    partition %d replicas %s leader %d isr %s\n", p.Partition, ints(p.Replicas), p.Leader, ints(p.ISR))
		}
	}
	return nil
}

func ints(s []int32) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

var uuidType = reflect.TypeFor[kbin.UUID]()

// generic turns a record into JSON values the way Kafka's JsonConverters name them:
// camelCase field names ("topicId", "isr"), UUIDs in base64url, bytes in base64.
func generic(v any) any { return genericValue(reflect.ValueOf(v)) }

func genericValue(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return genericValue(v.Elem())
	case reflect.Struct:
		m := map[string]any{}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			m[camel(f.Name)] = genericValue(v.Field(i))
		}
		return m
	case reflect.Array:
		if v.Type() == uuidType {
			return v.Interface().(kbin.UUID).String()
		}
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return base64.StdEncoding.EncodeToString(v.Bytes())
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = genericValue(v.Index(i))
		}
		return out
	}
	return v.Interface()
}

// camel turns a Go field name into Kafka's JSON name: ISR -> isr, TopicID -> topicId,
// LastKnownELR -> lastKnownElr, KRaftVersion -> kRaftVersion.
func camel(name string) string {
	r := []rune(name)
	// Fold upper-case runs except the last letter when a lower-case one follows it.
	for i := 0; i < len(r); i++ {
		if !unicode.IsUpper(r[i]) {
			continue
		}
		j := i
		for j < len(r) && unicode.IsUpper(r[j]) {
			j++
		}
		end := j
		if j < len(r) && j-i > 1 {
			end = j - 1 // the last capital starts the next word: KRaft -> K, Raft
		}
		for k := i + 1; k < end; k++ {
			r[k] = unicode.ToLower(r[k])
		}
		i = j - 1
	}
	r[0] = unicode.ToLower(r[0])
	return string(r)
}
