package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/groups/groupstest"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/fixture"
	"github.com/kraftwatch/kraftwatch/observer"
)

// fixtureView replays version's __consumer_offsets fixture up to (and including)
// partition/offset stop, over the fixture's metadata log, with a synced Tracker.
func fixtureView(t testing.TB, version string, stopPartition int32, stopOffset int64) *engine.View {
	t.Helper()
	loaded, err := observer.Load(fixture.MetadataDir(t, version), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := groups.NewState()
	for _, r := range fixture.ReadConsumerOffsets(t, version) {
		if r.Partition > stopPartition || (r.Partition == stopPartition && r.Offset > stopOffset) {
			continue
		}
		if _, err := s.Replay(r.Key, r.Value); err != nil {
			t.Fatalf("%d/%d: %v", r.Partition, r.Offset, err)
		}
	}
	return syncedView(t, s, loaded.Image)
}

func syncedView(t testing.TB, s *groups.State, im *image.Image) *engine.View {
	cache, err := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeMurmur3})
	if err != nil {
		t.Fatal(err)
	}
	tr := groups.NewTracker(s, cache)
	tr.Sync(im)
	return &engine.View{State: s, Image: im, Tracker: tr, Scheme: hashcache.SchemeMurmur3, Synced: true}
}

// server serves v; the tests run one request at a time, so v needs no owner.
func server(t testing.TB, v *engine.View) *httptest.Server {
	mux := http.NewServeMux()
	api.Register(mux, func(_ context.Context, fn func(*engine.View)) error { fn(v); return nil })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// validator checks requests and responses against api/openapi.yaml with
// kin-openapi's openapi3filter.
type validator struct {
	t      *testing.T
	router routers.Router
}

func newValidator(t *testing.T) *validator {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not a valid OpenAPI 3 document: %v", err)
	}
	doc.Servers = nil // match any host
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &validator{t: t, router: router}
}

// get fetches url, checks request and response against the document and returns
// the status and body.
func (v *validator) get(url string) (int, []byte) {
	v.t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		v.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		v.t.Fatalf("GET %s: not in openapi.yaml: %v", url, err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		v.t.Errorf("GET %s (%d): response does not match openapi.yaml: %v\n%s", url, resp.StatusCode, err, body)
	}
	if reqErr != nil && resp.StatusCode != http.StatusBadRequest {
		v.t.Errorf("GET %s: the document rejects the request (%v) but the server answered %d", url, reqErr, resp.StatusCode)
	}
	return resp.StatusCode, body
}

// TestOpenAPI checks the server's real answers, for every group of every fixture at
// several points of its replay and for bad requests, against openapi.yaml.
func TestOpenAPI(t *testing.T) {
	val := newValidator(t)
	for _, version := range fixture.Versions(t) {
		for _, stop := range [][2]int64{{0, 4}, {0, 161}, {1, 200}, {1, 1 << 40}} {
			v := fixtureView(t, version, int32(stop[0]), stop[1])
			v.History = engine.NewHistory(4)
			v.History.Record(events.GroupKey{Type: events.ConsumerGroup, ID: "g-list"}, engine.HistoryEvent{Type: events.TypeRebalanceNeeded, ID: "kw1-x",
				CoordinatorEpoch: 3, HasPreviousHash: true, PreviousHash: -5, HasNewHash: true, NewHash: 7, Summary: "partitions_added orders 3->5"})
			srv := server(t, v)
			status, body := val.get(srv.URL + "/v1/groups")
			if status != http.StatusOK {
				t.Fatalf("%s: %d %s", version, status, body)
			}
			var list api.GroupList
			if err := json.Unmarshal(body, &list); err != nil {
				t.Fatal(err)
			}
			if list.Matched != v.State.Len() || len(list.Groups) != v.State.Len() {
				t.Fatalf("%s: listed %d of %d matched, state has %d", version, len(list.Groups), list.Matched, v.State.Len())
			}
			for _, g := range list.Groups {
				if status, body := val.get(srv.URL + "/v1/groups/" + g.Type + "/" + g.ID); status != http.StatusOK {
					t.Fatalf("%s %s/%s: %d %s", version, g.Type, g.ID, status, body)
				}
			}
			val.get(srv.URL + "/v1/groups?type=consumer&state=stable&prefix=g-&limit=1")
		}
	}
	srv := server(t, fixtureView(t, "4.3.1", 0, 0))
	for _, bad := range []string{"/v1/groups?type=nope", "/v1/groups?state=dead", "/v1/groups?limit=0", "/v1/groups?after=!!", "/v1/groups/nope/x"} {
		if status, _ := val.get(srv.URL + bad); status != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", bad, status)
		}
	}
	if status, _ := val.get(srv.URL + "/v1/groups/consumer/missing"); status != http.StatusNotFound {
		t.Errorf("unknown group: %d, want 404", status)
	}
	if status, body := val.get(srv.URL + "/v1/openapi.yaml"); status != http.StatusOK || !strings.HasPrefix(string(body), "openapi: 3") {
		t.Errorf("openapi.yaml: %d", status)
	}
}

// TestDetailHistoryHashes: a rebalanced entry whose bump changed the stored hash shows
// the metadata cause's hashes, as a rebalance-needed entry shows its own; an entry
// without hashes shows null.
func TestDetailHistoryHashes(t *testing.T) {
	k := events.GroupKey{Type: events.ConsumerGroup, ID: "g-list"}
	v := fixtureView(t, "4.3.1", 0, 1<<40)
	v.History = engine.NewHistory(4)
	v.History.Record(k, engine.HistoryEvent{Type: events.TypeGroupRebalanced, ID: "kw1-a", CoordinatorEpoch: 3,
		HasPreviousHash: true, PreviousHash: -5, HasNewHash: true, NewHash: 7, Summary: "metadata"})
	v.History.Record(k, engine.HistoryEvent{Type: events.TypeGroupRebalanced, ID: "kw1-b", CoordinatorEpoch: 4, Summary: "member_left m1"})
	d, ok := api.Detail(v, k)
	if !ok {
		t.Fatal("g-list missing")
	}
	if len(d.Events) != 2 {
		t.Fatalf("events %+v", d.Events)
	}
	if e := d.Events[0]; e.PreviousHash == nil || *e.PreviousHash != -5 || e.NewHash == nil || *e.NewHash != 7 {
		t.Errorf("rebalanced entry with a metadata cause: previous_hash %v new_hash %v, want -5 and 7", e.PreviousHash, e.NewHash)
	}
	if e := d.Events[1]; e.PreviousHash != nil || e.NewHash != nil {
		t.Errorf("rebalanced entry without a hash change: previous_hash %v new_hash %v, want null", e.PreviousHash, e.NewHash)
	}
}

// TestDetailReconciling stops the 4.3.1 replay where the coordinator has moved
// payments away from g-list's only member (offset 161: it still owns it, pending
// revocation) and checks what the API shows of it, then the stable state after. The
// image is the fixture's last, in which payments was deleted and recreated: the
// partitions pending revocation are of the old id, which has no name any more.
func TestDetailReconciling(t *testing.T) {
	k := events.GroupKey{Type: events.ConsumerGroup, ID: "g-list"}
	d, ok := api.Detail(fixtureView(t, "4.3.1", 0, 161), k)
	if !ok {
		t.Fatal("g-list missing")
	}
	if d.State != "reconciling" || d.ReconcilingMembers != 1 || len(d.Members) != 1 {
		t.Fatalf("state %s, %d reconciling of %d", d.State, d.ReconcilingMembers, len(d.Members))
	}
	m := d.Members[0]
	got := fmt.Sprintf("epoch=%d state=%s reconciled=%v assigned=%v pending=%v target=%v client=%s host=%s",
		*m.MemberEpoch, *m.MemberState, *m.Reconciled, names(m.Assigned), names(m.PendingRevocation), names(m.Target), m.ClientID, m.ClientHost)
	want := "epoch=3 state=unrevoked_partitions reconciled=false assigned=[orders:0,1,2,3,4] pending=[:0,1] target=[orders:0,1,2,3,4] client=g-list-member host=/127.0.0.1"
	if got != want {
		t.Errorf("member:\n got %s\nwant %s", got, want)
	}
	d, _ = api.Detail(fixtureView(t, "4.3.1", 0, 167), k)
	if d.State != "stable" || !*d.Members[0].Reconciled || names(d.Members[0].PendingRevocation) != "[]" {
		t.Errorf("after offset 167: state %s, member %+v", d.State, d.Members[0])
	}
	if d.Hashes.CoordinatorMetadataHash == nil || d.Hashes.CoordinatorAgrees == nil {
		t.Errorf("hashes %+v: the 4.3.1 coordinator stores a MetadataHash", d.Hashes)
	}
}

// TestDetailStreamsTasks replays the streams fixture (a Kafka Streams application's
// group) to offset 9, where its one member owns the tasks its target assignment (offset
// 7) gave it, and checks what the API shows: tasks, not partitions, valid against the
// OpenAPI document.
func TestDetailStreamsTasks(t *testing.T) {
	val := newValidator(t)
	for _, version := range fixture.Versions(t) {
		loaded, err := observer.Load(fixture.MetadataDir(t, version), nil)
		if err != nil {
			t.Fatal(err)
		}
		s := groups.NewState()
		for _, r := range fixture.ReadStreamsOffsets(t, version) {
			if r.Offset > 9 {
				break
			}
			if _, err := s.Replay(r.Key, r.Value); err != nil {
				t.Fatalf("%s %d/%d: %v", version, r.Partition, r.Offset, err)
			}
		}
		v := syncedView(t, s, loaded.Image)
		d, ok := api.Detail(v, events.GroupKey{Type: events.StreamsGroup, ID: "kw-streams"})
		if !ok || len(d.Members) != 1 {
			t.Fatalf("%s: kw-streams %+v, %v", version, d, ok)
		}
		m := d.Members[0]
		b, _ := json.Marshal(struct {
			Assigned, Pending, Target *api.Tasks
			Partitions                [][]api.TopicPartitions
		}{m.AssignedTasks, m.TasksPendingRevocation, m.TargetTasks, [][]api.TopicPartitions{m.Assigned, m.PendingRevocation, m.Target}})
		const want = `{"Assigned":{"active":[{"subtopology_id":"0","partitions":[0,1]},{"subtopology_id":"1","partitions":[0,1]}],"standby":[],"warmup":[]},` +
			`"Pending":{"active":[],"standby":[],"warmup":[]},` +
			`"Target":{"active":[{"subtopology_id":"0","partitions":[0,1]},{"subtopology_id":"1","partitions":[0,1]}],"standby":[],"warmup":[]},` +
			`"Partitions":[null,null,null]}`
		if string(b) != want {
			t.Errorf("%s: member's tasks\n%s\nwant\n%s", version, b, want)
		}
		if status, body := val.get(server(t, v).URL + "/v1/groups/streams/kw-streams"); status != http.StatusOK {
			t.Fatalf("%s: %d %s", version, status, body)
		}
	}
}

func names(ts []api.TopicPartitions) string {
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s:%s", t.Topic, strings.Trim(strings.ReplaceAll(fmt.Sprint(t.Partitions), " ", ","), "[]")))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestListPaging pages through 4,000 synthetic groups with each filter and checks
// every matching group comes once, in order, with Matched the same on every page.
func TestListPaging(t *testing.T) {
	s := groups.NewState()
	for _, kv := range groupstest.Synthetic(groupstest.SyntheticConfig{Groups: 1000, Members: 1, Topics: 10, TopicsPerMember: 1, Assignments: true}) {
		if _, err := s.Replay(kv.Key, kv.Value); err != nil {
			t.Fatal(err)
		}
	}
	v := syncedView(t, s, image.Empty)
	for _, q := range []api.ListQuery{
		{Limit: 7},
		{Limit: 1000},
		{Type: events.ShareGroup, Limit: 33},
		{Prefix: "group-00", Limit: 10},
		{State: groups.StateAssigning, Limit: 100}, // the streams groups (no target assignment record)
	} {
		var want []events.GroupKey
		for _, k := range s.Keys() {
			g, _ := s.Group(k)
			if (q.Type == events.UnknownGroup || k.Type == q.Type) && strings.HasPrefix(k.ID, q.Prefix) && (q.State == groups.UnknownState || g.State() == q.State) {
				want = append(want, k)
			}
		}
		var got []events.GroupKey
		for pages := 0; ; pages++ {
			page := api.List(v, q)
			if page.Matched != len(want) {
				t.Fatalf("%+v: matched %d, want %d", q, page.Matched, len(want))
			}
			for _, g := range page.Groups {
				k, err := api.ParseGroupKey(g.Type, g.ID)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, k)
			}
			if page.Next == "" {
				break
			}
			k, err := api.ParseCursor(page.Next)
			if err != nil {
				t.Fatal(err)
			}
			q.After = &k
		}
		if len(want) == 0 || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%+v: paged %d groups, want %d in key order", q, len(got), len(want))
		}
	}
}
