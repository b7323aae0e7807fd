package events_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/kraftwatch/kraftwatch/events"
)

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
