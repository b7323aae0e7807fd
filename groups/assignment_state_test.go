package groups_test

import (
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/groups"
)

// TestStateAssignments replays a consumer group through the coordinator's records
// in the order it writes them, including an assignment record that comes before its
// member's record, and checks the derived state and what each member keeps.
func TestStateAssignments(t *testing.T) {
	tA := groups.UUID{1}
	tps := func(ps ...int32) []groups.TopicIDPartitions {
		return []groups.TopicIDPartitions{{TopicID: tA, Partitions: ps}}
	}
	target := func(m string, ps ...int32) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupTargetAssignmentMember, GroupID: "cg", MemberID: m,
			Value: &groups.ConsumerGroupTargetAssignmentMemberValue{TopicPartitions: tps(ps...)}}
	}
	targetEpoch := func(e int32) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupTargetAssignmentMetadata, GroupID: "cg",
			Value: &groups.ConsumerGroupTargetAssignmentMetadataValue{AssignmentEpoch: e}}
	}
	current := func(m string, epoch int32, st groups.MemberState, ps ...int32) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupCurrentMemberAssignment, GroupID: "cg", MemberID: m,
			Value: &groups.ConsumerGroupCurrentMemberAssignmentValue{MemberEpoch: epoch, State: st, AssignedPartitions: tps(ps...)}}
	}
	member := func(m string) groups.Record {
		return groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: "cg", MemberID: m,
			Value: &groups.ConsumerGroupMemberMetadataValue{ClientID: "client-" + m, ClientHost: "/10.0.0.1", RackID: "rack-a", SubscribedTopicNames: []string{"a"}}}
	}
	s := groups.NewState()
	steps := []struct {
		recs      []groups.Record
		state     groups.GroupState
		reconcile int
	}{
		{[]groups.Record{member("m1"), consumerMeta("cg", 1, 0)}, groups.StateAssigning, 1},
		{[]groups.Record{target("m1", 0, 1, 2, 3), targetEpoch(1)}, groups.StateReconciling, 1},
		{[]groups.Record{current("m1", 1, groups.MemberStable, 3, 1, 0, 2)}, groups.StateStable, 0},
		// m2 joins: its current assignment is written before its member record.
		{[]groups.Record{current("m2", 0, groups.MemberStable), member("m2"), consumerMeta("cg", 2, 0)}, groups.StateAssigning, 1},
		{[]groups.Record{target("m1", 0, 1), target("m2", 2, 3), targetEpoch(2)}, groups.StateReconciling, 2},
		{[]groups.Record{current("m1", 1, groups.MemberUnrevokedPartitions, 0, 1)}, groups.StateReconciling, 2},
		{[]groups.Record{current("m1", 2, groups.MemberStable, 0, 1), current("m2", 2, groups.MemberStable, 2, 3)}, groups.StateStable, 0},
		// m2 leaves: tombstones of its current and target assignment, then of its member record.
		{[]groups.Record{tombstone(groups.ConsumerGroupCurrentMemberAssignment, "cg", "m2")}, groups.StateReconciling, 1},
		{[]groups.Record{tombstone(groups.ConsumerGroupTargetAssignmentMember, "cg", "m2"), tombstone(groups.ConsumerGroupMemberMetadata, "cg", "m2")}, groups.StateStable, 0},
		{[]groups.Record{tombstone(groups.ConsumerGroupCurrentMemberAssignment, "cg", "m1"), tombstone(groups.ConsumerGroupTargetAssignmentMember, "cg", "m1"),
			tombstone(groups.ConsumerGroupMemberMetadata, "cg", "m1")}, groups.StateEmpty, 0},
	}
	for i, st := range steps {
		replay(t, s, st.recs...)
		g, ok := s.Group(cg)
		if !ok {
			t.Fatalf("step %d: group missing", i)
		}
		if g.State() != st.state || g.Reconciling() != st.reconcile {
			t.Fatalf("step %d: state %s with %d reconciling, want %s with %d\n%s", i, g.State(), g.Reconciling(), st.state, st.reconcile, s)
		}
		if i == 6 {
			m, _ := g.Member("m2")
			if m.ClientID != "client-m2" || m.RackID != "rack-a" || m.Assignment == nil || m.Assignment.MemberEpoch != 2 {
				t.Fatalf("m2 lost its member record or its assignment: %+v %+v", m, m.Assignment)
			}
			m1, _ := g.Member("m1")
			if got := groups.DescribePartitions(m1.Assignment.Target); got != groups.DescribePartitions(tps(0, 1)) {
				t.Fatalf("m1 target %s", got)
			}
		}
		if i == 2 {
			if !strings.Contains(s.String(), `assigned=[AQAAAAAAAAAAAAAAAAAAAA:0,1,2,3]`) {
				t.Fatalf("partitions not kept sorted:\n%s", s)
			}
		}
	}
	replay(t, s, tombstone(groups.ConsumerGroupTargetAssignmentMetadata, "cg", ""), tombstone(groups.ConsumerGroupMetadata, "cg", ""))
	if s.Len() != 0 {
		t.Fatalf("group kept after its tombstones:\n%s", s)
	}
}
