package api

import (
	"errors"
	"net/http"

	"github.com/kraftwatch/kraftwatch/groups"
)

// Status is the answer of GET /v1/status: how far kraftwatch is behind on
// __consumer_offsets, the same figures as /metrics' kraftwatch_group_records_lag,
// kraftwatch_group_reader_lag_* and kraftwatch_group_partitions_stalled.
type Status struct {
	Topic string `json:"topic"`
	// Records is the number of records read since kraftwatch started.
	Records int64 `json:"records"`
	// LagRecords sums the partitions' lag in records, over those whose leader answers.
	LagRecords int64 `json:"lag_records"`
	// Stalled is the number of partitions stalled for over KRAFTWATCH_STALL_AFTER.
	Stalled int `json:"stalled_partitions"`
	// Partitions is null until the reader has listed them.
	Partitions []PartitionStatus `json:"partitions"`
}

// PartitionStatus is one partition's lag (groups.PartitionLag).
type PartitionStatus struct {
	Partition int `json:"partition"`
	// LagRecords is -1 when unknown: its leader does not answer.
	LagRecords int64 `json:"lag_records"`
	// LagSeconds bounds the age of the oldest record not yet read; 0 when caught up,
	// -1 when unknown.
	LagSeconds float64 `json:"lag_seconds"`
	// Stalled is why the partition is stalled (groups.StallCause); absent when it is not.
	Stalled string `json:"stalled,omitempty"`
}

// StatusOf is r's status now.
func StatusOf(r *groups.Reader) Status {
	s := Status{Topic: groups.ConsumerOffsetsTopic, Records: r.Records()}
	stalled := map[int]string{}
	var se *groups.StallError
	if errors.As(r.Health(), &se) {
		s.Topic = se.Topic
		for _, p := range se.Partitions {
			stalled[p.Partition] = p.Cause.String()
		}
	}
	for _, l := range r.Partitions() {
		s.Partitions = append(s.Partitions, PartitionStatus{Partition: l.Partition, LagRecords: l.Records, LagSeconds: l.Seconds, Stalled: stalled[l.Partition]})
		s.LagRecords += max(0, l.Records)
	}
	s.Stalled = len(stalled)
	return s
}

// RegisterStatus adds GET /v1/status to mux, answering status().
func RegisterStatus(mux *http.ServeMux, status func() Status) {
	mux.HandleFunc("GET /v1/status", func(w http.ResponseWriter, _ *http.Request) { reply(w, status()) })
}
