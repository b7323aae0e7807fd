package publish_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
)

// TestRestartReadsNewerEvents: in a rolling upgrade an older kraftwatch reads the last
// event a newer one stored, whose objects have members it does not know. It takes the
// hash and cause from it as from its own, so it neither announces the group again nor
// publishes that transition a second time.
func TestRestartReadsNewerEvents(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	const group = "orders.app"
	p1 := newPublisher(t, baseConfig(t, connect(t, srv.ClientURL())))
	r := start(t, p1)
	enqueue(t, p1, transition(group, 0))
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}

	// The newer kraftwatch announces the next transition with members of its own.
	next := transition(group, 1)
	next.ClusterID, next.HashScheme = clusterID, events.SchemeMurmur3
	next.Topics = []events.CoveredTopic{{Name: "t1", TopicID: "AAAAAAAAAAAAAAAAAAAAAA", Partitions: 3, Hash: 7}}
	env, err := next.Wrap(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	added := map[string]any{"since": "v1.later"}
	m["kwnext"] = "extension attribute"
	data := m["data"].(map[string]any)
	data["assignor_hint"] = added
	data["reasons"].([]any)[0].(map[string]any)["record_type"] = "PartitionRecord"
	data["topics"].([]any)[0].(map[string]any)["racks"] = []any{"a", "b"}
	if body, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, srv.ClientURL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	msg := &nats.Msg{Subject: "_kraftwatch." + p1.Subject(events.ConsumerGroup, group), Data: body, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, env.ID)
	msg.Header.Set("Content-Type", events.ContentType)
	if _, err := js.PublishMsg(ctx, msg); err != nil {
		t.Fatal(err)
	}

	p2 := newPublisher(t, baseConfig(t, connect(t, srv.ClientURL())))
	last, err := p2.LoadLastPublished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l, ok := last[events.GroupKey{Type: events.ConsumerGroup, ID: group}]
	if !ok || l.Hash != int64(next.NewHash) || l.Cause.MetadataOffset != next.MetadataOffset {
		t.Fatalf("LoadLastPublished = %+v, %v; want the newer event's hash %d at offset %d", l, ok, next.NewHash, next.MetadataOffset)
	}
	r = start(t, p2)
	enqueue(t, p2, transition(group, 1))
	waitFor(t, 30*time.Second, "the transition handled", finished(p2, 1))
	if s := p2.Stats(); s.Published != 0 || s.AlreadyPublished != 1 {
		t.Fatalf("stats %+v, want the transition already published", s)
	}
	if err := r.stop(); err != nil {
		t.Fatal(err)
	}
}
