package cli

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// TestVerifyRules: verify compares only the groups the engine's coordinator check
// compares (groups.CheckCoordinatorHash) and says why it skipped each other one: a
// classic group, a group without members, one without a stored hash; and, once
// orders' only broker is unregistered (the coordinator then keeps its stored hash), the
// groups whose hashes differ because of it. Only a real disagreement is a MISMATCH.
func TestVerifyRules(t *testing.T) {
	orders := "AAAAAAAAAAAAAAAAAAAAAQ"
	build := func(base *image.Image, lines ...string) *image.Image {
		t.Helper()
		d := image.NewDelta(base)
		for _, l := range lines {
			rec, err := metadata.ParseText(l, nil)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			if err := d.Replay(rec); err != nil {
				t.Fatalf("%s: %v", l, err)
			}
		}
		im, _ := d.Apply(image.Provenance{Offset: 1, Epoch: 1})
		return im
	}
	im := build(image.Empty, "RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a",
		"TopicRecord Name=orders TopicID="+orders,
		"PartitionRecord TopicID="+orders+" PartitionID=0 Replicas=1 ISR=1 Leader=1")
	kafka, _ := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
	right := kafka.GroupHash(hashcache.ImageCluster{Image: im}, []string{"orders"})

	s := groups.NewState()
	apply := func(r groups.Record) { s.Apply(&r) }
	for _, g := range []string{"agrees", "differs", "unhashed"} {
		apply(groups.Record{Type: groups.ConsumerGroupMemberMetadata, GroupID: g, MemberID: "m-" + g,
			Value: &groups.ConsumerGroupMemberMetadataValue{SubscribedTopicNames: []string{"orders"}}})
	}
	for g, h := range map[string]int64{"agrees": right, "differs": right + 1, "empty": right + 1, "unhashed": 0} {
		apply(groups.Record{Type: groups.ConsumerGroupMetadata, GroupID: g, Value: &groups.ConsumerGroupMetadataValue{Epoch: 3, MetadataHash: h}})
	}
	apply(groups.Record{Type: groups.GroupMetadata, GroupID: "classic", Value: &groups.GroupMetadataValue{ProtocolType: "consumer", Generation: 3}})

	run := func(im *image.Image) (string, int, int) {
		t.Helper()
		cache, _ := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
		tr := groups.NewTracker(s, cache)
		tr.Sync(im)
		var b bytes.Buffer
		checked, bad := verifyGroups(&b, im, s, tr)
		return b.String(), checked, bad
	}
	out, checked, bad := run(im)
	want := []string{
		`MISMATCH consumer group "differs": kraftwatch ` + itoa(right) + `, coordinator ` + itoa(right+1),
		`SKIPPED consumer group "empty": no members: the coordinator does not refresh an empty group's hash`,
		`SKIPPED consumer group "unhashed": no stored MetadataHash`,
		`SKIPPED classic group "classic": classic group: no stored MetadataHash`,
		`2 group(s) checked against the coordinator's MetadataHash, 1 mismatch(es), 3 skipped`,
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("verify output lacks %q:\n%s", w, out)
		}
	}
	if checked != 2 || bad != 1 || strings.Count(out, "MISMATCH") != 1 {
		t.Errorf("%d checked, %d mismatches; want 2, 1:\n%s", checked, bad, out)
	}

	// orders' only broker unregistered: the agreeing group's hash now differs too,
	// and both disagreements are explained.
	out, checked, bad = run(build(im, "UnregisterBrokerRecord BrokerID=1 BrokerEpoch=1"))
	for _, g := range []string{"agrees", "differs"} {
		w := `SKIPPED consumer group "` + g + `": a replica is on an unregistered broker: the coordinator does not recompute then`
		if !strings.Contains(out, w) {
			t.Errorf("verify output lacks %q:\n%s", w, out)
		}
	}
	if checked != 0 || bad != 0 || strings.Contains(out, "MISMATCH") {
		t.Errorf("broker unregistered: %d checked, %d mismatches; want 0, 0:\n%s", checked, bad, out)
	}
}

func itoa(h int64) string { return strconv.FormatInt(h, 10) }
