package whatif

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// reassignment is kafka-reassign-partitions' plan file (ReassignPartitionsCommand
// parsePartitionReassignmentData): version 1, and per partition the target replicas
// (log_dirs, when present, are not part of a hash and are ignored).
type reassignment struct {
	Version    int `json:"version"`
	Partitions []struct {
		Topic     *string `json:"topic"`
		Partition *int32  `json:"partition"`
		Replicas  []int32 `json:"replicas"`
	} `json:"partitions"`
}

// ParseReassignment reads a kafka-reassign-partitions plan
// ({"version":1,"partitions":[{"topic","partition","replicas":[…]}]}).
func ParseReassignment(data []byte) ([]Move, error) {
	var r reassignment
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: reassignment JSON: %v", ErrInvalidPlan, err)
	}
	if r.Version != 1 {
		return nil, fmt.Errorf("%w: reassignment JSON: version %d, want 1", ErrInvalidPlan, r.Version)
	}
	out := make([]Move, 0, len(r.Partitions))
	for i, p := range r.Partitions {
		if p.Topic == nil || *p.Topic == "" || p.Partition == nil || len(p.Replicas) == 0 {
			return nil, fmt.Errorf("%w: reassignment JSON: partitions[%d]: topic, partition and replicas are required", ErrInvalidPlan, i)
		}
		out = append(out, Move{Topic: *p.Topic, Partition: *p.Partition, Replicas: p.Replicas})
	}
	return out, nil
}

// FormatReassignment writes moves as a kafka-reassign-partitions plan, one
// partition a line.
func FormatReassignment(moves []Move) []byte {
	var b bytes.Buffer
	b.WriteString(`{"version":1,"partitions":[`)
	for i, m := range moves {
		if i > 0 {
			b.WriteByte(',')
		}
		topic, _ := json.Marshal(m.Topic)
		replicas, _ := json.Marshal(m.Replicas)
		fmt.Fprintf(&b, "\n  {\"topic\":%s,\"partition\":%d,\"replicas\":%s}", topic, m.Partition, replicas)
	}
	b.WriteString("\n]}\n")
	return b.Bytes()
}

// proposals is Cruise Control's /proposals?json=true answer, of which only the
// proposals are read: ExecutionProposal.getJsonStructure gives topicPartition (a
// Kafka TopicPartition, serialised as an object with topic and partition), and the
// broker ids of oldReplicas and newReplicas.
type proposals struct {
	Proposals *[]struct {
		TopicPartition json.RawMessage `json:"topicPartition"`
		OldReplicas    []int32         `json:"oldReplicas"`
		NewReplicas    []int32         `json:"newReplicas"`
	} `json:"proposals"`
}

// ParseCruiseControl reads Cruise Control's proposals JSON. Each move keeps the old
// replicas in From, so Evaluate refuses proposals computed against another state.
func ParseCruiseControl(data []byte) ([]Move, error) {
	var p proposals
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("%w: Cruise Control JSON: %v", ErrInvalidPlan, err)
	}
	if p.Proposals == nil {
		return nil, fmt.Errorf("%w: Cruise Control JSON: no \"proposals\" (ask /kafkacruisecontrol/proposals?json=true)", ErrInvalidPlan)
	}
	out := make([]Move, 0, len(*p.Proposals))
	for i, pr := range *p.Proposals {
		topic, part, err := topicPartition(pr.TopicPartition)
		if err != nil {
			return nil, fmt.Errorf("%w: Cruise Control JSON: proposals[%d]: %v", ErrInvalidPlan, i, err)
		}
		if len(pr.NewReplicas) == 0 || len(pr.OldReplicas) == 0 {
			return nil, fmt.Errorf("%w: Cruise Control JSON: proposals[%d] (%s-%d): oldReplicas and newReplicas are required", ErrInvalidPlan, i, topic, part)
		}
		out = append(out, Move{Topic: topic, Partition: part, Replicas: pr.NewReplicas, From: pr.OldReplicas})
	}
	return out, nil
}

// topicPartition reads {"topic":T,"partition":N} or Kafka's TopicPartition.toString
// form "T-N".
func topicPartition(raw json.RawMessage) (string, int32, error) {
	var obj struct {
		Topic     *string `json:"topic"`
		Partition *int32  `json:"partition"`
	}
	if err := json.Unmarshal(raw, &obj); err == nil && obj.Topic != nil && obj.Partition != nil {
		return *obj.Topic, *obj.Partition, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if i := strings.LastIndexByte(s, '-'); i > 0 {
			if n, err := strconv.ParseInt(s[i+1:], 10, 32); err == nil && n >= 0 {
				return s[:i], int32(n), nil
			}
		}
	}
	return "", 0, fmt.Errorf("topicPartition %s: want {\"topic\":…,\"partition\":…} or \"topic-N\"", raw)
}
