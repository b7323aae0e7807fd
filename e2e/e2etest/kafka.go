package e2etest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/kraftwatch/kraftwatch/internal/kafkatest"
)

// Admin changes topics with kafka-go's admin requests: a round trip, where
// kafkatest.Cluster's tool methods start a JVM each.
type Admin struct {
	cl *kafka.Client
}

// NewAdmin returns an Admin of every broker of c.
func NewAdmin(c *kafkatest.Cluster) *Admin {
	return &Admin{cl: &kafka.Client{Addr: kafka.TCP(strings.Split(c.Bootstrap(), ",")...), Timeout: 30 * time.Second}}
}

// CreateTopic creates a topic with replication factor 1.
func (a *Admin) CreateTopic(ctx context.Context, t testing.TB, name string, partitions int) {
	t.Helper()
	if err := a.CreateTopics(ctx, kafka.TopicConfig{Topic: name, NumPartitions: partitions, ReplicationFactor: 1}); err != nil {
		t.Fatal(err)
	}
}

// CreateTopics creates topics as configured, returning the first error of any.
func (a *Admin) CreateTopics(ctx context.Context, tcs ...kafka.TopicConfig) error {
	res, err := a.cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: tcs})
	if err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	for _, tc := range tcs {
		if err := res.Errors[tc.Topic]; err != nil {
			return fmt.Errorf("create topic %s: %w", tc.Topic, err)
		}
	}
	return nil
}

// AlterPartitions grows topic name to count partitions.
func (a *Admin) AlterPartitions(ctx context.Context, t testing.TB, name string, count int) {
	t.Helper()
	if err := a.TryAlterPartitions(ctx, name, count); err != nil {
		t.Fatal(err)
	}
}

// TryAlterPartitions is AlterPartitions for goroutines other than the test's: it
// returns the error.
func (a *Admin) TryAlterPartitions(ctx context.Context, name string, count int) error {
	res, err := a.cl.CreatePartitions(ctx, &kafka.CreatePartitionsRequest{
		Topics: []kafka.TopicPartitionsConfig{{Name: name, Count: int32(count)}},
	})
	if err == nil {
		err = res.Errors[name]
	}
	if err != nil {
		return fmt.Errorf("partitions of %s -> %d: %w", name, count, err)
	}
	return nil
}

// DeleteTopic deletes topic name.
func (a *Admin) DeleteTopic(ctx context.Context, t testing.TB, name string) {
	t.Helper()
	res, err := a.cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{name}})
	if err == nil {
		err = res.Errors[name]
	}
	if err != nil {
		t.Fatalf("delete topic %s: %v", name, err)
	}
}

// AlterTopicConfig sets one config of topic.
func (a *Admin) AlterTopicConfig(ctx context.Context, t testing.TB, topic, key, value string) {
	t.Helper()
	res, err := a.cl.AlterConfigs(ctx, &kafka.AlterConfigsRequest{Resources: []kafka.AlterConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic,
		Configs: []kafka.AlterConfigRequestConfig{{Name: key, Value: value}},
	}}})
	if err == nil {
		for _, e := range res.Errors {
			err = errors.Join(err, e)
		}
	}
	if err != nil {
		t.Fatalf("alter config of %s: %v", topic, err)
	}
}

// Join is a group member to start: its group, kind (kafkatest.KindConsumer when
// empty) and subscription, topics or a regex.
type Join struct {
	Group  string
	Kind   string
	Topics []string
	Regex  string
}

// StartMembers starts one member (Kafka's Java client, kafkatest.Cluster.StartMember)
// per join, concurrently, and waits until each has its assignment (a share member: its
// subscription). It returns them in the order of joins; they leave their groups at the
// end of the test, or earlier by Close.
func StartMembers(ctx context.Context, t testing.TB, c *kafkatest.Cluster, joins ...Join) []*kafkatest.Member {
	t.Helper()
	members := make([]*kafkatest.Member, len(joins))
	t.Cleanup(func() {
		start := time.Now()
		var wg sync.WaitGroup
		for _, m := range members {
			if m != nil {
				wg.Go(m.Close)
			}
		}
		wg.Wait()
		if d := time.Since(start); d > 3*time.Second {
			t.Logf("members took %v to leave", d.Round(time.Millisecond))
		}
	})
	var wg sync.WaitGroup
	errs := make([]error, len(joins))
	for i, j := range joins {
		wg.Go(func() {
			kind := cmp.Or(j.Kind, kafkatest.KindConsumer)
			m, err := c.StartMember(ctx, j.Group, kind, j.Topics, j.Regex)
			if err != nil {
				errs[i] = fmt.Errorf("group %s: %w", j.Group, err)
				return
			}
			members[i] = m
			want := "assigned "
			if kind == kafkatest.KindShare {
				want = "subscribed"
			}
			if _, err := m.WaitFor(ctx, want); err != nil {
				errs[i] = fmt.Errorf("group %s: %w", j.Group, err)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return members
}

// StartConsumers starts one KIP-848 consumer per group, each reading the topic given
// for it, as StartMembers does.
func StartConsumers(ctx context.Context, t testing.TB, c *kafkatest.Cluster, topicOf map[string]string) {
	t.Helper()
	var joins []Join
	for _, g := range slices.Sorted(maps.Keys(topicOf)) {
		joins = append(joins, Join{Group: g, Topics: []string{topicOf[g]}})
	}
	StartMembers(ctx, t, c, joins...)
}

// ClassicGroups creates n classic consumer groups named prefix-00000..., 64 at a time,
// each with one member subscribed to topic and assigned its partition 0 (JoinClassic).
func ClassicGroups(ctx context.Context, t testing.TB, c *kafkatest.Cluster, prefix, topic string, n int) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				// Until __consumer_offsets exists and its partitions are loaded the
				// coordinator answers with retriable errors.
				for attempt := 1; ; attempt++ {
					err := JoinClassic(ctx, c, fmt.Sprintf("%s-%05d", prefix, i), []string{topic}, map[string][]int{topic: {0}})
					if err == nil {
						break
					}
					if attempt == 100 || !(errors.Is(err, kafka.NotCoordinatorForGroup) ||
						errors.Is(err, kafka.GroupCoordinatorNotAvailable) || errors.Is(err, kafka.GroupLoadInProgress)) {
						errs <- err
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// JoinClassic makes one member join classic consumer group group, subscribed to
// topics, with kafka-go's group APIs through node 1: JoinGroup (again with the member
// id the coordinator asks for), then SyncGroup assigning itself assigned (topic to
// partitions; nil for none). The coordinator then stores the group's subscription in
// __consumer_offsets. The member never heartbeats; a 30-minute session keeps it. The
// coordinator's errors are returned as they are (kafka.NotCoordinatorForGroup ... while
// __consumer_offsets loads), so the caller can retry; it is safe for concurrent use.
func JoinClassic(ctx context.Context, c *kafkatest.Cluster, group string, topics []string, assigned map[string][]int) error {
	cl := &kafka.Client{Addr: kafka.TCP(c.Nodes[0].BrokerAddr), Timeout: time.Minute}
	join := &kafka.JoinGroupRequest{
		GroupID: group, SessionTimeout: 30 * time.Minute, RebalanceTimeout: time.Minute, ProtocolType: "consumer",
		Protocols: []kafka.GroupProtocol{{Name: "range", Metadata: kafka.GroupProtocolSubscription{Topics: topics}}},
	}
	res, err := cl.JoinGroup(ctx, join)
	if err == nil && errors.Is(res.Error, kafka.MemberIDRequired) {
		join.MemberID = res.MemberID
		res, err = cl.JoinGroup(ctx, join)
	}
	if err == nil {
		err = res.Error
	}
	if err != nil {
		return fmt.Errorf("group %s: join: %w", group, err)
	}
	sync, err := cl.SyncGroup(ctx, &kafka.SyncGroupRequest{
		GroupID: group, GenerationID: res.GenerationID, MemberID: res.MemberID, ProtocolType: "consumer", ProtocolName: "range",
		Assignments: []kafka.SyncGroupRequestAssignment{{MemberID: res.MemberID,
			Assignment: kafka.GroupProtocolAssignment{AssignedPartitions: assigned}}},
	})
	if err == nil {
		err = sync.Error
	}
	if err != nil {
		return fmt.Errorf("group %s: sync: %w", group, err)
	}
	return nil
}
