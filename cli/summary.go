package cli

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
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

// summaryHead is the Summary of im without its topics, which summary writes one at a
// time.
func summaryHead(source string, im *image.Image) Summary {
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
	return s
}

// topicSummary is one topic's Summary; its slices are the image's.
func topicSummary(t *image.Topic, parts []PartitionSummary) TopicSummary {
	ts := TopicSummary{Name: t.Name(), ID: t.ID().String(), Partitions: parts[:0]}
	for p := range t.Partitions() { // in id order
		ts.Partitions = append(ts.Partitions, PartitionSummary{Partition: p.ID(), Replicas: p.Replicas(), Leader: p.Leader(), ISR: p.ISR()})
	}
	return ts
}

// summary prints the image, streamed: the topics are written one at a time, through a
// buffer, so dump holds no copy of the image beside it.
func (d *dumper) summary(path, source string, im *image.Image) error {
	w := bufio.NewWriterSize(d.out, 64<<10)
	err := d.writeSummary(w, path, source, im)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	return err
}

func (d *dumper) writeSummary(w *bufio.Writer, path, source string, im *image.Image) error {
	s := summaryHead(source, im)
	var parts []PartitionSummary
	if d.json {
		// What json.MarshalIndent(s, "", "  ") prints, with the topics marshalled one
		// at a time into the place of the empty list.
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return err
		}
		const tail = "[]\n}"
		topics := im.SortedTopics()
		if len(topics) == 0 || !bytes.HasSuffix(b, []byte(tail)) {
			_, err = fmt.Fprintf(w, "%s\n", b)
			return err
		}
		w.Write(b[:len(b)-len(tail)])
		w.WriteString("[\n")
		var tb []byte
		for i, t := range topics {
			ts := topicSummary(t, parts)
			parts = ts.Partitions
			if tb, err = appendTopicJSON(tb[:0], &ts); err != nil {
				return err
			}
			w.WriteString("    ")
			w.Write(tb)
			if i < len(topics)-1 {
				w.WriteByte(',')
			}
			w.WriteByte('\n')
		}
		_, err = w.WriteString("  ]\n}\n")
		return err
	}
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
	topics := im.SortedTopics()
	fmt.Fprintf(w, "topics: %d\n", len(topics))
	var line []byte
	for _, t := range topics {
		ts := topicSummary(t, parts)
		parts = ts.Partitions
		fmt.Fprintf(w, "  topic %s id %s partitions %d\n", ts.Name, ts.ID, len(ts.Partitions))
		for _, p := range ts.Partitions {
			line = append(line[:0], "    partition "...)
			line = strconv.AppendInt(line, int64(p.Partition), 10)
			line = append(line, " replicas "...)
			line = appendInts(line, p.Replicas)
			line = append(line, " leader "...)
			line = strconv.AppendInt(line, int64(p.Leader), 10)
			line = append(line, " isr "...)
			line = appendInts(line, p.ISR)
			line = append(line, '\n')
			if _, err := w.Write(line); err != nil {
				return err
			}
		}
	}
	return nil
}

// appendTopicJSON appends what json.MarshalIndent(ts, "    ", "  ") returns, without
// reflection or garbage for the partitions (a topic may have thousands).
func appendTopicJSON(b []byte, ts *TopicSummary) ([]byte, error) {
	name, err := json.Marshal(ts.Name)
	if err != nil {
		return b, err
	}
	id, err := json.Marshal(ts.ID)
	if err != nil {
		return b, err
	}
	b = append(b, "{\n      \"name\": "...)
	b = append(b, name...)
	b = append(b, ",\n      \"id\": "...)
	b = append(b, id...)
	b = append(b, ",\n      \"partitions\": "...)
	if len(ts.Partitions) == 0 {
		b = append(b, "[]"...)
	} else {
		b = append(b, "[\n"...)
		for i := range ts.Partitions {
			p := &ts.Partitions[i]
			b = append(b, "        {\n          \"partition\": "...)
			b = strconv.AppendInt(b, int64(p.Partition), 10)
			b = append(b, ",\n          \"replicas\": "...)
			b = appendIntsJSON(b, p.Replicas, "          ")
			b = append(b, ",\n          \"leader\": "...)
			b = strconv.AppendInt(b, int64(p.Leader), 10)
			b = append(b, ",\n          \"isr\": "...)
			b = appendIntsJSON(b, p.ISR, "          ")
			b = append(b, "\n        }"...)
			if i < len(ts.Partitions)-1 {
				b = append(b, ',')
			}
			b = append(b, '\n')
		}
		b = append(b, "      ]"...)
	}
	return append(b, "\n    }"...), nil
}

// appendIntsJSON appends s as json.MarshalIndent prints it at indent: null for nil,
// [] when empty, else one element a line.
func appendIntsJSON(b []byte, s []int32, indent string) []byte {
	switch {
	case s == nil:
		return append(b, "null"...)
	case len(s) == 0:
		return append(b, "[]"...)
	}
	b = append(b, "[\n"...)
	for i, v := range s {
		b = append(b, indent...)
		b = append(b, "  "...)
		b = strconv.AppendInt(b, int64(v), 10)
		if i < len(s)-1 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = append(b, indent...)
	return append(b, ']')
}

// appendInts appends s as [1,2,3].
func appendInts(b []byte, s []int32) []byte {
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return append(b, ']')
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
