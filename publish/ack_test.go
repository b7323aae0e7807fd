package publish

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/internal/natstest"
)

// TestParseAckRealAnswers feeds parseAck the answers a real nats-server gives to each
// kind of publish the workers make, and checks how each is classified.
func TestParseAckRealAnswers(t *testing.T) {
	srv := natstest.Start(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "ACK", Subjects: []string{"ack.>"}, MaxMsgSize: 512,
		Duplicates: time.Minute}); err != nil {
		t.Fatal(err)
	}
	answer := func(subject, id, stream, lastSeq string, size int) *nats.Msg {
		t.Helper()
		m := nats.NewMsg(subject)
		m.Data = []byte(strings.Repeat("x", size))
		for k, v := range map[string]string{jetstream.MsgIDHeader: id, jetstream.ExpectedStreamHeader: stream,
			jetstream.ExpectedLastSubjSeqHeader: lastSeq} {
			if v != "" {
				m.Header.Set(k, v)
			}
		}
		r, err := nc.RequestMsg(m, 5*time.Second)
		if err != nil && !errors.Is(err, nats.ErrNoResponders) {
			t.Fatal(err)
		}
		if errors.Is(err, nats.ErrNoResponders) {
			// nats.go turns the 503 into an error for requests; the workers' subscription
			// receives it as a message with the status header, as here.
			r = &nats.Msg{Header: nats.Header{"Status": {"503"}}}
		}
		return r
	}
	type want struct {
		seq       uint64
		duplicate bool
		check     func(error) bool
	}
	isNil := func(err error) bool { return err == nil }
	for _, tc := range []struct {
		name string
		m    func() *nats.Msg
		want want
	}{
		{"stored", func() *nats.Msg { return answer("ack.a", "id-1", "ACK", "0", 1) }, want{1, false, isNil}},
		// nats-server checks the expected sequence before the id: a duplicate is answered
		// as such only when the expected sequence holds.
		{"duplicate", func() *nats.Msg { return answer("ack.a", "id-1", "ACK", "1", 1) }, want{1, true, isNil}},
		{"wrong last sequence", func() *nats.Msg { return answer("ack.a", "id-2", "ACK", "0", 1) }, want{0, false, wrongLastSeq}},
		{"stored after", func() *nats.Msg { return answer("ack.a", "id-2", "ACK", "1", 1) }, want{2, false, isNil}},
		{"another stream expected", func() *nats.Msg { return answer("ack.b", "id-3", "OTHER", "0", 1) }, want{0, false, noStream}},
		{"no stream captures the subject", func() *nats.Msg { return answer("none.a", "id-4", "ACK", "0", 1) }, want{0, false, noStream}},
		{"message too big", func() *nats.Msg { return answer("ack.c", "id-5", "ACK", "0", 1000) }, want{0, false, permanent}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.m()
			seq, dup, err := parseAck(m)
			if seq != tc.want.seq || dup != tc.want.duplicate || !tc.want.check(err) {
				t.Fatalf("parseAck(%q %v) = %d, %v, %v", m.Data, m.Header, seq, dup, err)
			}
		})
	}
}

func TestParseAck(t *testing.T) {
	apiErr := func(code jetstream.ErrorCode) func(error) bool {
		return func(err error) bool {
			var e *jetstream.APIError
			return errors.As(err, &e) && e.ErrorCode == code
		}
	}
	isNil := func(err error) bool { return err == nil }
	isErr := func(err error) bool { return err != nil }
	for _, tc := range []struct {
		name      string
		data      string
		header    nats.Header
		seq       uint64
		duplicate bool
		check     func(error) bool
	}{
		{"stored", `{"stream":"S","seq":42}`, nil, 42, false, isNil},
		{"domain", `{"stream":"S","domain":"hub","seq":7}`, nil, 7, false, isNil},
		{"duplicate", `{"stream":"S","seq":9,"duplicate": true}`, nil, 9, true, isNil},
		{"duplicate without space", `{"stream":"S","seq":9,"duplicate":true}`, nil, 9, true, isNil},
		{"other fields (encoding/json)", `{"stream":"S","seq":3,"batch":"b","count":2}`, nil, 3, false, isNil},
		{"spaces (encoding/json)", `{ "stream": "S", "seq": 5 }`, nil, 5, false, isNil},
		{"escaped stream name (encoding/json)", `{"stream":"S\"x","seq":5}`, nil, 5, false, isNil},
		{"stream not found", `{"error":{"code":404,"err_code":10059,"description":"stream not found"}}`, nil, 0, false, noStream},
		{"wrong last sequence", `{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 3"},"stream":"S","seq":0}`, nil, 0, false,
			wrongLastSeq},
		{"stream mismatch", `{"error":{"code":400,"err_code":10060,"description":"expected stream does not match"}}`, nil, 0, false, noStream},
		{"too big", `{"error":{"code":400,"err_code":10054,"description":"message size exceeds maximum allowed"}}`, nil, 0, false, permanent},
		{"other error", `{"error":{"code":503,"err_code":10077,"description":"resource limits exceeded for account"}}`, nil, 0, false,
			apiErr(10077)},
		{"no stream name", `{"seq":1}`, nil, 0, false, isErr},
		{"not JSON", `+OK`, nil, 0, false, isErr},
		{"seq too long", `{"stream":"S","seq":123456789012345678901234}`, nil, 0, false, isErr},
		{"no responders", "", nats.Header{"Status": {"503"}}, 0, false, noStream},
		{"timeout status", "", nats.Header{"Status": {"408"}, "Description": {"Request Timeout"}}, 0, false, isErr},
		{"empty", "", nil, 0, false, isErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seq, dup, err := parseAck(&nats.Msg{Data: []byte(tc.data), Header: tc.header})
			if seq != tc.seq || dup != tc.duplicate || !tc.check(err) || (err != nil && permanent(err) && !strings.Contains(tc.name, "big")) {
				t.Fatalf("parseAck(%q) = %d, %v, %v", tc.data, seq, dup, err)
			}
		})
	}
	b := []byte(`{"stream":"KRAFTWATCH_x","seq":123456,"duplicate": true}`)
	if n := testing.AllocsPerRun(100, func() { _, _, _ = fastAck(b) }); n != 0 {
		t.Errorf("fastAck allocates %v times", n)
	}
}

// TestAckTimeout: publishes whose answers are lost time out and are retried; the
// retry finds the event stored (read as the subject's last) and does not store it again.
func TestAckTimeout(t *testing.T) {
	srv := natstest.Start(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	p, err := New(Config{Conn: nc, ClusterID: "c1", PublishTimeout: 300 * time.Millisecond, RetryMin: 10 * time.Millisecond,
		RetryMax: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitReady(t, p)
	// Lose every answer: the reply subscription goes away.
	if err := p.replies.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	for g := range 3 {
		if err := p.Enqueue(ctx, events.RebalanceNeeded{GroupID: "g" + string(rune('a'+g)), GroupType: events.ConsumerGroup, NewHash: 1}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for s := p.Stats(); s.AlreadyPublished < 3 || s.Queued != 0; s = p.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v: want 3 found stored after their acks timed out", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s := p.Stats()
	if s.Published != 0 || s.Failed < 3 || s.Dropped != 0 {
		t.Fatalf("stats %+v: want 0 published (no ack), 3 or more failed attempts", s)
	}
	info, err := p.js.Stream(ctx, p.StreamName())
	if err != nil || info.CachedInfo().State.Msgs != 3 {
		t.Fatalf("stream: %v, %+v: want 3 events stored once each", err, info)
	}
}

// TestDuplicateAck: an event already in the stream's duplicate window (stored by
// another client with the same Nats-Msg-Id, where the publisher believed the subject
// empty) is answered as a duplicate and counted as already published.
func TestDuplicateAck(t *testing.T) {
	srv := natstest.Start(t)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	p, err := New(Config{Conn: nc, ClusterID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitReady(t, p)
	if _, err := p.LoadLastPublished(ctx); err != nil { // the subject is now believed empty
		t.Fatal(err)
	}
	ev := events.RebalanceNeeded{ClusterID: "c1", HashScheme: events.SchemeMurmur3, GroupID: "g", GroupType: events.ConsumerGroup, NewHash: 1}
	// Stored under another subject of the stream with the event's id: the publisher's
	// publish expects sequence 0 on its own subject, which holds nothing, and is
	// refused as a duplicate only by the id.
	m := nats.NewMsg(internal(p.Subject(events.ConsumerGroup, "other")))
	m.Header.Set(jetstream.MsgIDHeader, ev.MsgID())
	m.Data = []byte("{}")
	if _, err := p.js.PublishMsg(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := p.Enqueue(ctx, ev); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s := p.Stats(); s.AlreadyPublished != 1 || s.Queued != 0; s = p.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v: want the event found a duplicate", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s := p.Stats(); s.Published != 0 || s.Failed != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func waitReady(t *testing.T, p *Publisher) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !p.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("publisher not ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
