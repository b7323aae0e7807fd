package whatif_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/kraftwatch/kraftwatch/whatif"
)

func TestParseReassignment(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []whatif.Move
		wantErr  bool
	}{
		{"plan", `{"version":1,"partitions":[{"topic":"orders","partition":2,"replicas":[4,2],"log_dirs":["any","any"]}]}`,
			[]whatif.Move{{Topic: "orders", Partition: 2, Replicas: []int32{4, 2}}}, false},
		{"empty plan", `{"version":1,"partitions":[]}`, []whatif.Move{}, false},
		{"wrong version", `{"version":2,"partitions":[]}`, nil, true},
		{"no partition", `{"version":1,"partitions":[{"topic":"orders","replicas":[1]}]}`, nil, true},
		{"no replicas", `{"version":1,"partitions":[{"topic":"orders","partition":0}]}`, nil, true},
		{"not JSON", `version: 1`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := whatif.ParseReassignment([]byte(tc.in))
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, whatif.ErrInvalidPlan)) {
				t.Fatalf("err = %v, want error %v wrapping ErrInvalidPlan", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReassignmentRoundTrip(t *testing.T) {
	moves := []whatif.Move{{Topic: "a\"b", Partition: 1, Replicas: []int32{3, 1}}, {Topic: "c", Partition: 0, Replicas: []int32{2}}}
	got, err := whatif.ParseReassignment(whatif.FormatReassignment(moves))
	if err != nil || !reflect.DeepEqual(got, moves) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
}

func TestParseCruiseControl(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []whatif.Move
		wantErr  bool
	}{
		// The shape of /kafkacruisecontrol/proposals?json=true (OptimizationResult):
		// topicPartition is Kafka's TopicPartition as Gson writes it.
		{"proposals", `{"summary":{"numReplicaMovements":1},"goalSummary":[],"proposals":[{"topicPartition":{"hash":0,"partition":3,"topic":"orders"},"oldLeader":1,"oldReplicas":[1,2],"newReplicas":[4,2]}],"version":1}`,
			[]whatif.Move{{Topic: "orders", Partition: 3, Replicas: []int32{4, 2}, From: []int32{1, 2}}}, false},
		{"string topic partition", `{"proposals":[{"topicPartition":"my-topic-12","oldLeader":1,"oldReplicas":[1],"newReplicas":[2]}]}`,
			[]whatif.Move{{Topic: "my-topic", Partition: 12, Replicas: []int32{2}, From: []int32{1}}}, false},
		{"no proposals", `{"summary":{}}`, nil, true},
		{"bad topic partition", `{"proposals":[{"topicPartition":"orders","oldReplicas":[1],"newReplicas":[2]}]}`, nil, true},
		{"no new replicas", `{"proposals":[{"topicPartition":"orders-0","oldReplicas":[1],"newReplicas":[]}]}`, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := whatif.ParseCruiseControl([]byte(tc.in))
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, whatif.ErrInvalidPlan)) {
				t.Fatalf("err = %v, want error %v wrapping ErrInvalidPlan", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
