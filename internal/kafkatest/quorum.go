package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"
)

// ShortMetadataLog are server properties (for Options.Props) that make Kafka roll a
// metadata log segment every 8 KiB, write a snapshot every 4 KiB of records or every
// 10 s, and delete the snapshots older than 30 s with the log before them: the log of
// a cluster that has run a minute or two no longer starts at offset 0
// (TrimMetadataLogs), yet still holds at least the last 20 s or so, so that an
// observer a few seconds behind (after a leader change) goes on fetching the log.
var ShortMetadataLog = map[string]string{
	"internal.metadata.log.segment.bytes":             "8192",
	"metadata.log.max.record.bytes.between.snapshots": "4096",
	"metadata.log.max.snapshot.interval.ms":           "10000",
	"metadata.max.retention.ms":                       "30000",
}

// QuorumStatus is what `kafka-metadata-quorum describe --status` reports.
type QuorumStatus struct {
	LeaderID      int
	LeaderEpoch   int
	HighWatermark int64
	Voters        []int // node ids
	Observers     []int // node ids (brokers, and any observer with an id)
}

var (
	quorumField  = regexp.MustCompile(`(?m)^(LeaderId|LeaderEpoch|HighWatermark|CurrentVoters|CurrentObservers):\s*(.*)$`)
	quorumJSONID = regexp.MustCompile(`"id":\s*(-?\d+)`)
	quorumID     = regexp.MustCompile(`-?\d+`)
)

// Quorum runs kafka-metadata-quorum --bootstrap-controller describe --status against
// the running controllers.
func (c *Cluster) Quorum(ctx context.Context) (QuorumStatus, error) {
	var q QuorumStatus
	bootstrap := c.runningControllers()
	if bootstrap == "" {
		return q, errors.New("kafkatest: no controller is running")
	}
	out, err := c.Tool(ctx, "org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-controller", bootstrap, "describe", "--status")
	if err != nil {
		return q, err
	}
	seen := 0
	for _, m := range quorumField.FindAllStringSubmatch(out, -1) {
		seen++
		v := strings.TrimSpace(m[2])
		switch m[1] {
		case "LeaderId":
			q.LeaderID, err = strconv.Atoi(v)
		case "LeaderEpoch":
			q.LeaderEpoch, err = strconv.Atoi(v)
		case "HighWatermark":
			q.HighWatermark, err = strconv.ParseInt(v, 10, 64)
		case "CurrentVoters":
			q.Voters = quorumIDs(v)
		case "CurrentObservers":
			q.Observers = quorumIDs(v)
		}
		if err != nil {
			return q, fmt.Errorf("kafkatest: kafka-metadata-quorum: %s: %w\n%s", m[0], err, out)
		}
	}
	if seen < 3 {
		return q, fmt.Errorf("kafkatest: kafka-metadata-quorum printed no status:\n%s", out)
	}
	return q, nil
}

// quorumIDs reads the node ids of `[1,2,3]` (before KIP-853) or of
// `[{"id": 1, "directoryId": …, "endpoints": […]}, …]`.
func quorumIDs(v string) []int {
	var ids []int
	if strings.Contains(v, `"id"`) {
		for _, m := range quorumJSONID.FindAllStringSubmatch(v, -1) {
			id, _ := strconv.Atoi(m[1])
			ids = append(ids, id)
		}
		return ids
	}
	for _, m := range quorumID.FindAllString(v, -1) {
		id, _ := strconv.Atoi(m)
		ids = append(ids, id)
	}
	return ids
}

// runningControllers is the CONTROLLER listener of every controller whose JVM runs.
func (c *Cluster) runningControllers() string {
	var addrs []string
	for _, n := range c.Controllers() {
		if n.Running() {
			addrs = append(addrs, n.ControllerAddr)
		}
	}
	return strings.Join(addrs, ",")
}

// Running reports whether the node's JVM runs (started and neither stopped nor killed).
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cmd != nil
}

// Node returns the node with id, or nil.
func (c *Cluster) Node(id int) *Node {
	for _, n := range c.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// QuorumLeader waits until the running controllers agree on a leader that is running
// and returns it with the status that names it.
func (c *Cluster) QuorumLeader(ctx context.Context) (*Node, QuorumStatus, error) {
	var last error
	for {
		q, err := c.Quorum(ctx)
		if err == nil {
			if n := c.Node(q.LeaderID); n != nil && n.Controller && n.Running() {
				return n, q, nil
			}
			err = fmt.Errorf("leader %d is not a running controller", q.LeaderID)
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, q, fmt.Errorf("kafkatest: no quorum leader: %w (last: %v)", ctx.Err(), last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// AddClusterACL allows principal ("User:name") operations (Kafka's names:
// "ClusterAction", "Describe", …) on the cluster resource, with kafka-acls
// --bootstrap-controller over the PLAINTEXT controller listeners (User:ANONYMOUS, a
// super user). Options.Authorizer must be set.
func (c *Cluster) AddClusterACL(ctx context.Context, principal string, operations ...string) error {
	return c.clusterACL(ctx, "--add", principal, operations)
}

// RemoveClusterACL removes what AddClusterACL added.
func (c *Cluster) RemoveClusterACL(ctx context.Context, principal string, operations ...string) error {
	return c.clusterACL(ctx, "--remove", principal, operations)
}

func (c *Cluster) clusterACL(ctx context.Context, action, principal string, operations []string) error {
	if len(operations) == 0 {
		return errors.New("kafkatest: an ACL needs an operation")
	}
	args := []string{"--bootstrap-controller", c.runningControllers(), action, "--force", "--allow-principal", principal, "--cluster"}
	for _, op := range operations {
		args = append(args, "--operation", op)
	}
	_, err := c.Tool(ctx, "org.apache.kafka.tools.AclCommand", args...)
	return err
}

// LogStartOffset is the base offset of the oldest segment in the node's
// __cluster_metadata-0 (segments Kafka renamed to .deleted do not count).
func (n *Node) LogStartOffset() (int64, error) {
	entries, err := os.ReadDir(n.MetadataLogDir())
	if err != nil {
		return 0, err
	}
	start := int64(-1)
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok {
			continue
		}
		off, err := strconv.ParseInt(base, 10, 64)
		if err != nil {
			continue
		}
		if start < 0 || off < start {
			start = off
		}
	}
	if start < 0 {
		return 0, fmt.Errorf("kafkatest: node %d: no segment in %s", n.ID, n.MetadataLogDir())
	}
	return start, nil
}

// TrimMetadataLogs waits until the metadata log of every running controller starts
// after offset after, so that an observer fetching from there must bootstrap from a
// snapshot. It first writes enough records for segments to roll and snapshots to be
// written (it creates and deletes throw-away topics kafkatest-trim-<n> of 32
// partitions), then waits for Kafka's cleaner, which every node runs once a minute (a
// fixed interval of KafkaRaftClient): a minute or two on a new cluster. The cluster
// needs ShortMetadataLog (or similar) in Options.Props. It returns every running
// controller's log start offset.
func (c *Cluster) TrimMetadataLogs(ctx context.Context, after int64) (map[int]int64, error) {
	admin := &kafka.Client{Addr: kafka.TCP(strings.Split(c.Bootstrap(), ",")...), Timeout: 30 * time.Second}
	for i := 0; ; i++ {
		starts := map[int]int64{}
		done := true
		for _, n := range c.Controllers() {
			if !n.Running() {
				continue
			}
			s, err := n.LogStartOffset()
			if err != nil {
				return nil, err
			}
			starts[n.ID] = s
			done = done && s > after
		}
		if done {
			return starts, nil
		}
		if i >= 4 {
			select {
			case <-ctx.Done():
				return starts, fmt.Errorf("kafkatest: metadata logs still start at %v: %w", starts, ctx.Err())
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		name := fmt.Sprintf("kafkatest-trim-%d-%d", time.Now().UnixMilli(), i)
		res, err := admin.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{Topic: name, NumPartitions: 32, ReplicationFactor: 1}}})
		if err == nil {
			err = res.Errors[name]
		}
		if err != nil {
			return starts, fmt.Errorf("kafkatest: create %s: %w", name, err)
		}
		del, err := admin.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: []string{name}})
		if err == nil {
			err = del.Errors[name]
		}
		if err != nil {
			return starts, fmt.Errorf("kafkatest: delete %s: %w", name, err)
		}
	}
}
