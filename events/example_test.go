package events_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
)

// A subscriber that follows one Kafka cluster's events and resumes after a restart.
func ExampleFollow() {
	nc, err := nats.Connect(nats.DefaultURL, nats.MaxReconnects(-1))
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Drain()
	js, err := jetstream.New(nc)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err = events.Follow(ctx, js, events.FollowConfig{
		ClusterID: "MkU3OEVBNTcwNTJENDM2Qk",
		Durable:   "orders-autoscaler", // the position survives restarts
	}, func(ctx context.Context, d events.Delivery) error {
		switch e := d.Event.Data.(type) {
		case *events.RebalanceNeeded:
			fmt.Printf("%s group %q must rebalance: hash %d (%d reasons)\n", e.GroupType, e.GroupID, e.NewHash, len(e.Reasons))
		default: // a type newer than this program: skip it
			fmt.Println("skipping", d.Event.Type)
		}
		return nil // acknowledged: not delivered again
	})
	if err != nil {
		log.Fatal(err)
	}
}

func ExampleDecode() {
	body := []byte(`{"specversion":"1.0","id":"kw1-cf2619beef075874f91ba8989936c08c","source":"kraftwatch/MkU3OEVBNTcwNTJENDM2Qk","type":"kraftwatch.group.rebalance_needed.v1","subject":"group/consumer/orders.app","time":"2025-11-03T14:15:16.789Z","datacontenttype":"application/json","data":{"cluster_id":"MkU3OEVBNTcwNTJENDM2Qk","group_id":"orders.app","group_type":"consumer","hash_scheme":"murmur3","previous_hash":"6148914691236517205","new_hash":"-6148914691236517206","reasons":[{"kind":"partitions_added","topic":"orders","topic_id":"b2KQm1tqRBCzb0Y5bXy2WQ","old_partitions":3,"new_partitions":6}],"metadata_offset":1234,"metadata_epoch":5,"consumer_offsets":{"partition":17,"offset":9001},"coordinator_epoch":42}}`)
	ev, err := events.Decode(body)
	if errors.Is(err, events.ErrUnknownType) {
		return // a newer kraftwatch's event type
	} else if err != nil {
		log.Fatal(err)
	}
	e := ev.Data.(*events.RebalanceNeeded)
	r := e.Reasons[0]
	fmt.Printf("%s %q: %s %s %d->%d, hash %d -> %d\n", e.GroupType, e.GroupID, r.Kind, r.Topic, r.OldPartitions, r.NewPartitions,
		e.PreviousHash.Hash, e.NewHash)
	// Output: consumer "orders.app": partitions_added orders 3->6, hash 6148914691236517205 -> -6148914691236517206
}
