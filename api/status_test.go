package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/groups"
)

// TestStatus: GET /v1/status answers what the reader reports, in the document's
// shape: before the partitions are listed (a Reader not yet run) and with a
// partition caught up, one behind and one stalled with its lag unknown.
func TestStatus(t *testing.T) {
	r, err := groups.NewReader(groups.ReaderConfig{Brokers: []string{"127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	listed := api.Status{Topic: groups.ConsumerOffsetsTopic, Records: 42, LagRecords: 7, Stalled: 1, Partitions: []api.PartitionStatus{
		{Partition: 0},
		{Partition: 1, LagRecords: 7, LagSeconds: 1.5},
		{Partition: 2, LagRecords: -1, LagSeconds: -1, Stalled: groups.CauseNoAnswer.String()},
	}}
	val := newValidator(t)
	for name, status := range map[string]api.Status{"not listed": api.StatusOf(r), "listed": listed} {
		t.Run(name, func(t *testing.T) {
			mux := http.NewServeMux()
			api.RegisterStatus(mux, func() api.Status { return status })
			srv := httptest.NewServer(mux)
			defer srv.Close()
			val.t = t
			code, body := val.get(srv.URL + "/v1/status")
			if code != http.StatusOK {
				t.Fatalf("%d %s", code, body)
			}
			var got api.Status
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, status) {
				t.Errorf("got %+v, want %+v", got, status)
			}
		})
	}
}
