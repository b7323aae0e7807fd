package clients_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	cejsm "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/client"
	"github.com/nats-io/nats.go"

	"github.com/kraftwatch/kraftwatch/events"
)

// TestCloudEventsSDK reads kraftwatch's events with the CloudEvents Go SDK's NATS
// JetStream binding as its documentation shows (NewConsumer with the stream name and a
// subject, NewClient, StartReceiver): the binding finds the stream by the subject, and
// every event arrives as a structured-mode CloudEvent whose attributes are kraftwatch's
// (id = Nats-Msg-Id = the events package's id, source, type, subject, time,
// datacontenttype) and whose data decodes to the same event. With the SDK's default
// client options the callbacks run concurrently (GOMAXPROCS poll goroutines, callbacks
// not blocking), so order is not kept; with WithPollGoroutines(1) and
// WithBlockingCallback() each group's events arrive in stream order.
func TestCloudEventsSDK(t *testing.T) {
	s := start(t)
	byGroup := map[string]string{}
	for g, ids := range s.want {
		for _, id := range ids {
			byGroup[id] = g
		}
	}
	for _, tc := range []struct {
		name    string
		opts    []client.Option
		subOpts []nats.SubOpt
		ordered bool
	}{
		{name: "defaults"},
		{name: "ordered", opts: []client.Option{client.WithPollGoroutines(1), client.WithBlockingCallback()}, ordered: true},
		{name: "durable ordered", opts: []client.Option{client.WithPollGoroutines(1), client.WithBlockingCallback()},
			subOpts: []nats.SubOpt{nats.Durable("sdk-go"), nats.AckExplicit(), nats.MaxAckPending(1)}, ordered: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			consumer, err := cejsm.NewConsumer(s.url(), "KRAFTWATCH_"+cluster+"_EVENTS", subject, nil, nil, tc.subOpts)
			if err != nil {
				t.Fatal(err)
			}
			defer consumer.Close(context.Background())
			c, err := cloudevents.NewClient(consumer, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var got []string
			var bad []string
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			go func() {
				err := c.StartReceiver(ctx, func(_ context.Context, e cloudevents.Event) {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, e.ID())
					if problem := checkCloudEvent(e); problem != "" {
						bad = append(bad, e.ID()+": "+problem)
					}
					if len(got) == len(s.all) {
						cancel()
					}
				})
				if err != nil {
					t.Error(err)
				}
			}()
			<-ctx.Done()
			time.Sleep(200 * time.Millisecond) // anything more would be a duplicate
			mu.Lock()
			defer mu.Unlock()
			if len(bad) > 0 {
				t.Fatalf("%d events with wrong attributes; first: %s", len(bad), bad[0])
			}
			s.checkIDs(t, "sdk-go "+tc.name, got, byGroup, tc.ordered)
		})
	}
}

// checkCloudEvent returns what is wrong with e as a kraftwatch event, or "".
func checkCloudEvent(e cloudevents.Event) string {
	if err := e.Validate(); err != nil {
		return "not a valid CloudEvent: " + err.Error()
	}
	// The data, put back in kraftwatch's envelope, must decode with the events package
	// to the same attributes.
	env := map[string]any{"specversion": e.SpecVersion(), "id": e.ID(), "source": e.Source(), "type": e.Type(),
		"subject": e.Subject(), "time": e.Time(), "datacontenttype": e.DataContentType(), "data": json.RawMessage(e.Data())}
	b, err := json.Marshal(env)
	if err != nil {
		return err.Error()
	}
	ev, err := events.DecodeRebalanceNeeded(b)
	if err != nil {
		return "attributes and data do not make a kraftwatch event: " + err.Error()
	}
	switch {
	case e.SpecVersion() != "1.0", e.Type() != events.TypeRebalanceNeeded, e.DataContentType() != "application/json":
		return "specversion, type or datacontenttype"
	case e.Source() != "kraftwatch/"+cluster:
		return "source " + e.Source()
	case e.Subject() != "group/consumer/"+ev.Data.GroupID:
		return "subject " + e.Subject()
	case e.ID() != ev.Data.MsgID():
		return "id is not the event's MsgID"
	case !e.Time().Equal(time.Date(2025, 1, 1, 0, 0, e.Time().Second(), 0, time.UTC)):
		return "time " + e.Time().String()
	}
	return ""
}
