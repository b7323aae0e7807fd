package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/image/imagetest"
)

// post sends body to url, checks request and response against the document and
// returns the status and body.
func (v *validator) post(url, body string) (int, []byte) {
	v.t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		v.t.Fatalf("POST %s: not in openapi.yaml: %v", url, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	check := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	check.SetBodyBytes(out)
	if err := openapi3filter.ValidateResponse(context.Background(), check); err != nil {
		v.t.Errorf("POST %s (%d): response does not match openapi.yaml: %v\n%s", url, resp.StatusCode, err, out)
	}
	if reqErr != nil && resp.StatusCode != http.StatusBadRequest {
		v.t.Errorf("POST %s: the document rejects the request (%v) but the server answered %d", url, reqErr, resp.StatusCode)
	}
	return resp.StatusCode, out
}

func TestWhatIf(t *testing.T) {
	img := imagetest.Replay(t, image.Empty, image.Provenance{},
		"RegisterBrokerRecord BrokerID=1 BrokerEpoch=1 Rack=a",
		"RegisterBrokerRecord BrokerID=2 BrokerEpoch=1 Rack=b",
		"RegisterBrokerRecord BrokerID=3 BrokerEpoch=1 Rack=a",
		"TopicRecord Name=orders TopicID=orders",
		"PartitionRecord TopicID=orders PartitionID=0 Replicas=1,2 ISR=1,2 Leader=1",
		"TopicRecord Name=payments TopicID=payments",
		"PartitionRecord TopicID=payments PartitionID=0 Replicas=3 ISR=3 Leader=3")
	st := groups.NewState()
	for _, l := range []string{"member consumer g-orders m1 topics=orders", "member share s-pay m1 topics=payments"} {
		rec, err := groupstest.ParseText(l)
		if err != nil {
			t.Fatal(err)
		}
		st.Apply(&rec)
	}
	val := newValidator(t)
	srv := server(t, syncedView(t, st, img))
	for _, tc := range []struct {
		name, body string
		status     int
		groups     string // "type/id min-max" of each group
		check      func(t *testing.T, r *api.WhatIfResponse)
	}{
		// Kafka's hash, one rack per replica: orders [1,2] -> [1,3] is racks a,b, then
		// a,a,b during the move (1,3,2), then a,a: one net change, two at most.
		{name: "cross-rack move", body: `{"reassignment":{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,3]}]}}`,
			status: 200, groups: "consumer/g-orders 1-2", check: func(t *testing.T, r *api.WhatIfResponse) {
				if r.Order == nil || len(r.Order.Changing) != 1 || len(r.Order.Neutral) != 0 {
					t.Errorf("order %+v: want the move among the rack-changing ones", r.Order)
				}
			}},
		// payments 3 -> 1, both in rack a: a, then a,a, then a; no net change.
		{name: "move within a rack", body: `{"cruise_control":{"proposals":[{"topicPartition":{"topic":"payments","partition":0},"oldLeader":3,"oldReplicas":[3],"newReplicas":[1]}]}}`,
			status: 200, groups: "share/s-pay 0-2"},
		{name: "rack changed", body: `{"set_racks":[{"broker":3,"rack":"b"}]}`, status: 200, groups: "share/s-pay 1-1"},
		{name: "suggest", body: `{"decommission":[3],"suggest":true}`, status: 200, groups: "share/s-pay 1-1", // unregistering 3 now
			check: func(t *testing.T, r *api.WhatIfResponse) {
				s := r.Suggestion
				if s == nil || !bytes.Contains(s.Reassignment, []byte(`{"topic":"payments","partition":0,"replicas":[1]}`)) {
					t.Fatalf("suggestion %+v: want payments-0 moved to broker 1", s)
				}
				for _, g := range s.Result.Groups {
					if g.Min != 0 || g.Hash != g.FinalHash {
						t.Errorf("with the suggestion %s/%s rebalances %d-%d, hash %d -> %d; want no net change", g.Type, g.ID, g.Min, g.Max, g.Hash, g.FinalHash)
					}
				}
			}},
		{name: "no change", body: `{}`, status: 400},
		{name: "unknown field", body: `{"reassign":{}}`, status: 400},
		{name: "unknown topic", body: `{"delete_topics":["nope"]}`, status: 400},
		{name: "stale proposal", body: `{"cruise_control":{"proposals":[{"topicPartition":"orders-0","oldReplicas":[2,1],"newReplicas":[1,3]}]}}`, status: 400},
		{name: "suggest two brokers", body: `{"decommission":[1,3],"suggest":true}`, status: 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := val.post(srv.URL+"/v1/whatif", tc.body)
			if status != tc.status {
				t.Fatalf("status %d, want %d: %s", status, tc.status, body)
			}
			if status != 200 {
				return
			}
			var r api.WhatIfResponse
			if err := json.Unmarshal(body, &r); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range r.Groups {
				got = append(got, g.Type+"/"+g.ID+" "+itoa(g.Min)+"-"+itoa(g.Max))
			}
			if strings.Join(got, ", ") != tc.groups {
				t.Errorf("groups %q, want %q\n%s", strings.Join(got, ", "), tc.groups, body)
			}
			if tc.check != nil {
				tc.check(t, &r)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
