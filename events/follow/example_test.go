package follow_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/events/follow"
)

// A subscriber that follows one Kafka cluster's events and resumes after a restart.
func ExampleRun() {
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
	err = follow.Run(ctx, js, follow.Config{
		ClusterID: "MkU3OEVBNTcwNTJENDM2Qk",
		Durable:   "orders-autoscaler", // the position survives restarts
	}, func(ctx context.Context, d follow.Delivery) error {
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
