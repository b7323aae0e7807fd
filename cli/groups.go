package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
)

const groupsUsage = `usage: kraftwatch groups [--type T] [--state S] [--prefix P] --url URL [ID]
       kraftwatch groups [--type T] [--state S] [--prefix P] --bootstrap HOSTS (METADATA_DIR | --bootstrap-controller HOSTS) [ID]`

// Groups runs `kraftwatch groups`: a table of groups, or with ID one group's detail
// and timeline, from a running sidecar's API (--url) or straight from Kafka
// (--bootstrap: __consumer_offsets replayed over the metadata log, like hashes).
func Groups(args, environ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("groups", flag.ContinueOnError)
	fs.SetOutput(stderr)
	typ := fs.String("type", "", "only groups of this type: classic, consumer, share or streams")
	state := fs.String("state", "", "only groups in this state: empty, assigning, reconciling, stable or not_ready")
	prefix := fs.String("prefix", "", "only groups whose id starts with this")
	base := fs.String("url", "", "a running kraftwatch's HTTP address (http://host:8080)")
	bootstrap := fs.String("bootstrap", "", "Kafka bootstrap servers: read __consumer_offsets directly")
	controllers := fs.String("bootstrap-controller", "", controllerFlagHelp)
	scheme := fs.String("scheme", hashcache.DefaultScheme, "with --bootstrap: the hash scheme of the table (murmur3 or kafka)")
	if code, ok := parseArgs(fs, args, groupsUsage, func() bool {
		if *base != "" {
			return *bootstrap == "" && *controllers == "" && fs.NArg() <= 1
		}
		return *bootstrap != "" && (oneSource(fs.NArg(), *controllers) == nil || oneSource(fs.NArg()-1, *controllers) == nil)
	}); !ok {
		return code
	}
	id, hasID := "", false
	dir := fs.Arg(0)
	switch {
	case *base != "" && fs.NArg() == 1:
		id, hasID = fs.Arg(0), true
	case *base == "" && *controllers == "" && fs.NArg() == 2:
		id, hasID = fs.Arg(1), true
	case *base == "" && *controllers != "" && fs.NArg() == 1:
		id, hasID, dir = fs.Arg(0), true, ""
	}
	q := url.Values{}
	for k, v := range map[string]string{"type": *typ, "state": *state, "prefix": *prefix} {
		if v != "" {
			q.Set(k, v)
		}
	}
	var src groupSource
	if *base != "" {
		src = &httpSource{base: strings.TrimSuffix(*base, "/"), client: &http.Client{Timeout: 30 * time.Second}}
	} else {
		var err error
		if src, err = kafkaSource(dir, *controllers, environ, *bootstrap, *scheme, id, stderr); err != nil {
			fmt.Fprintf(stderr, "kraftwatch groups: %v\n", err)
			return 1
		}
	}
	var err error
	if hasID {
		err = printGroup(stdout, src, *typ, id)
	} else {
		err = printGroups(stdout, src, q)
	}
	if err != nil {
		fmt.Fprintf(stderr, "kraftwatch groups: %v\n", err)
		return 1
	}
	return 0
}

// groupSource answers the API's two questions: from a sidecar or from a replay.
type groupSource interface {
	list(q url.Values) (api.GroupList, error)
	// detail returns the group, false when there is none.
	detail(k events.GroupKey) (api.GroupDetail, bool, error)
	// timeline is what happened to the group: the sidecar's events, or the state
	// transitions seen in the replay.
	timeline(k events.GroupKey, d api.GroupDetail) (title string, rows [][]string)
}

// httpSource reads a running kraftwatch's API.
type httpSource struct {
	base   string
	client *http.Client
}

func (h *httpSource) get(path string, q url.Values, out any) (int, error) {
	u := h.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	resp, err := h.client.Get(u)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var p api.Problem
		json.NewDecoder(resp.Body).Decode(&p)
		return resp.StatusCode, fmt.Errorf("GET %s: %s: %s", u, resp.Status, p.Error)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.StatusCode, fmt.Errorf("GET %s: %w", u, err)
	}
	return resp.StatusCode, nil
}

func (h *httpSource) list(q url.Values) (api.GroupList, error) {
	var all api.GroupList
	q.Set("limit", strconv.Itoa(api.MaxLimit))
	for {
		var page api.GroupList
		if _, err := h.get("/v1/groups", q, &page); err != nil {
			return all, err
		}
		all.Groups = append(all.Groups, page.Groups...)
		all.Matched, all.Synced = page.Matched, page.Synced
		if page.Next == "" {
			return all, nil
		}
		q.Set("after", page.Next)
	}
}

func (h *httpSource) detail(k events.GroupKey) (api.GroupDetail, bool, error) {
	var d api.GroupDetail
	status, err := h.get("/v1/groups/"+k.Type.String()+"/"+url.PathEscape(k.ID), nil, &d)
	if status == http.StatusNotFound {
		return d, false, nil
	}
	return d, err == nil, err
}

func (h *httpSource) timeline(_ events.GroupKey, d api.GroupDetail) (string, [][]string) {
	rows := [][]string{{"TIME", "EVENT", "COORDINATOR_EPOCH", "HASH", "WHAT"}}
	for _, e := range d.Events {
		hash := "-"
		if e.NewHash != nil {
			hash = fmt.Sprint(int64(*e.NewHash))
		}
		rows = append(rows, []string{e.Time.UTC().Format(time.RFC3339Nano), strings.TrimPrefix(e.Type, "kraftwatch.group."),
			fmt.Sprint(e.CoordinatorEpoch), hash, dash(e.Summary)})
	}
	return "EVENTS (oldest first)", rows
}

// replaySource answers from a State replayed from Kafka, with the state
// transitions of one group recorded during the replay.
type replaySource struct {
	view  *engine.View
	trans map[events.GroupKey][][]string
}

// kafkaSource replays __consumer_offsets over the metadata log, recording the state
// transitions of the groups whose id is id (all types), when id is not "".
func kafkaSource(dir, controllers string, environ []string, bootstrap, scheme, id string, stderr io.Writer) (*replaySource, error) {
	r := &replaySource{trans: map[events.GroupKey][][]string{}}
	last := map[events.GroupKey]string{}
	im, state, cache, err := inspectInputsWatching(dir, controllers, environ, bootstrap, scheme, stderr,
		func(m groups.Message, rec groups.Record, s *groups.State) {
			if id == "" || rec.GroupID != id || rec.Type.IsOffsetCommit() {
				return
			}
			k := rec.GroupKey()
			now := "removed"
			if g, ok := s.Group(k); ok {
				now = fmt.Sprintf("%s\t%s\t%d\t%d", g.State(), epoch(g), g.NumMembers(), g.Reconciling())
			}
			if now == last[k] {
				return
			}
			last[k] = now
			row := []string{m.Time.UTC().Format(time.RFC3339Nano), fmt.Sprintf("%d/%d", m.Partition, m.Offset), rec.Type.String()}
			r.trans[k] = append(r.trans[k], append(row, strings.Split(now, "\t")...))
		})
	if err != nil {
		return nil, err
	}
	if state == nil {
		return nil, errors.New("no __consumer_offsets read")
	}
	tr := groups.NewTracker(state, cache)
	tr.Sync(im)
	r.view = &engine.View{State: state, Image: im, Tracker: tr, Scheme: cache.Scheme().Name(), Synced: true}
	return r, nil
}

func epoch(g *groups.Group) string {
	target := "-"
	if g.TargetAssignmentEpoch >= 0 {
		target = fmt.Sprint(g.TargetAssignmentEpoch)
	}
	if !g.HasMetadata {
		return "-/" + target
	}
	return fmt.Sprintf("%d/%s", g.Epoch, target)
}

func (r *replaySource) list(q url.Values) (api.GroupList, error) {
	lq := api.ListQuery{Prefix: q.Get("prefix"), Limit: api.MaxLimit}
	var err error
	if lq.Type, err = api.ParseGroupType(q.Get("type")); err != nil {
		return api.GroupList{}, err
	}
	if s := q.Get("state"); s != "" {
		var ok bool
		if lq.State, ok = groups.ParseGroupState(s); !ok {
			return api.GroupList{}, fmt.Errorf("state %q (empty, assigning, reconciling, stable or not_ready)", s)
		}
	}
	var all api.GroupList
	for {
		page := api.List(r.view, lq)
		all.Groups = append(all.Groups, page.Groups...)
		all.Matched, all.Synced = page.Matched, page.Synced
		if page.Next == "" {
			return all, nil
		}
		k, err := api.ParseCursor(page.Next)
		if err != nil {
			return all, err
		}
		lq.After = &k
	}
}

func (r *replaySource) detail(k events.GroupKey) (api.GroupDetail, bool, error) {
	d, ok := api.Detail(r.view, k)
	return d, ok, nil
}

func (r *replaySource) timeline(k events.GroupKey, _ api.GroupDetail) (string, [][]string) {
	rows := [][]string{{"TIME", "RECORD", "TYPE", "STATE", "EPOCH/TARGET", "MEMBERS", "RECONCILING"}}
	return "STATE CHANGES (from the records, oldest first)", append(rows, r.trans[k]...)
}

func printGroups(w io.Writer, src groupSource, q url.Values) error {
	list, err := src.list(q)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tGROUP\tSTATE\tEPOCH\tTARGET_EPOCH\tMEMBERS\tRECONCILING\tHASH")
	for _, g := range list.Groups {
		hash := "-"
		if g.Hash != nil {
			hash = fmt.Sprintf("%d (%s)", int64(*g.Hash), g.HashScheme)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", g.Type, g.ID, g.State, optInt(g.Epoch), optInt(g.TargetAssignmentEpoch),
			g.Members, g.ReconcilingMembers, hash)
	}
	tw.Flush()
	if !list.Synced {
		fmt.Fprintln(w, "(kraftwatch is still replaying its inputs: the list may be incomplete)")
	}
	return nil
}

// printGroup prints one group; without typ, the id is looked up in every type.
func printGroup(w io.Writer, src groupSource, typ, id string) error {
	var keys []events.GroupKey
	if typ != "" {
		k, err := api.ParseGroupKey(typ, id)
		if err != nil {
			return err
		}
		keys = []events.GroupKey{k}
	} else {
		list, err := src.list(url.Values{"prefix": {id}})
		if err != nil {
			return err
		}
		for _, g := range list.Groups {
			if g.ID == id {
				k, _ := api.ParseGroupKey(g.Type, g.ID)
				keys = append(keys, k)
			}
		}
		if len(keys) > 1 {
			var types []string
			for _, k := range keys {
				types = append(types, k.Type.String())
			}
			return fmt.Errorf("group %q exists as %s: give --type", id, strings.Join(types, " and "))
		}
	}
	if len(keys) == 0 {
		return fmt.Errorf("no group %q in __consumer_offsets", id)
	}
	d, ok, err := src.detail(keys[0])
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no %s group %q in __consumer_offsets", keys[0].Type, id)
	}
	printDetail(w, d)
	title, rows := src.timeline(keys[0], d)
	fmt.Fprintf(w, "\n%s\n", title)
	table(w, rows)
	return nil
}

func printDetail(w io.Writer, d api.GroupDetail) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "group\t%s %q\n", d.Type, d.ID)
	fmt.Fprintf(tw, "state\t%s (%d members, %d reconciling)\n", d.State, d.GroupSummary.Members, d.ReconcilingMembers)
	fmt.Fprintf(tw, "epoch\tgroup %s, target assignment %s\n", optInt(d.Epoch), optInt(d.TargetAssignmentEpoch))
	if d.ProtocolType != "" || d.Protocol != "" {
		fmt.Fprintf(tw, "protocol\t%s %s\n", dash(d.ProtocolType), dash(d.Protocol))
	}
	fmt.Fprintf(tw, "subscribed\tnames %s, regexes %s\n", words(d.SubscribedTopicNames), words(quoted(d.SubscribedTopicRegexes)))
	fmt.Fprintf(tw, "topics\t%s\n", words(d.Topics))
	for _, m := range d.RegexMatches {
		line := fmt.Sprintf("%q matches %s", m.Regex, words(m.Matches))
		if m.Error != "" {
			line = fmt.Sprintf("%q invalid: %s", m.Regex, m.Error)
		}
		if m.CoordinatorTopics != nil {
			line += fmt.Sprintf("; coordinator resolved %s", words(m.CoordinatorTopics))
		}
		fmt.Fprintf(tw, "regex\t%s\n", line)
	}
	agree := "no stored hash"
	if d.Hashes.CoordinatorMetadataHash != nil {
		agree = fmt.Sprintf("coordinator %d", int64(*d.Hashes.CoordinatorMetadataHash))
		if *d.Hashes.CoordinatorAgrees {
			agree += " (agrees with kafka)"
		} else {
			agree += " (differs from kafka)"
		}
	}
	fmt.Fprintf(tw, "hash\tmurmur3 %d, kafka %d, %s\n", int64(d.Hashes.Murmur3), int64(d.Hashes.Kafka), agree)
	tw.Flush()
	fmt.Fprintln(w)
	rows := [][]string{{"MEMBER", "CLIENT_ID", "HOST", "RACK", "SUBSCRIPTION", "EPOCH", "MEMBER_STATE", "ASSIGNED", "PENDING_REVOCATION", "TARGET", "RECONCILED"}}
	for _, m := range d.Members {
		sub := words(m.SubscribedTopicNames)
		if m.SubscribedTopicRegex != "" {
			sub = strconv.Quote(m.SubscribedTopicRegex)
		}
		state, reconciled := "-", "-"
		if m.MemberState != nil {
			state = *m.MemberState
		}
		if m.Reconciled != nil {
			reconciled = map[bool]string{true: "yes", false: "NO"}[*m.Reconciled]
		}
		assigned, pending, target := partitionsText(m.Assigned), partitionsText(m.PendingRevocation), partitionsText(m.Target)
		if d.Type == "streams" { // tasks, not partitions
			assigned, pending, target = tasksText(m.AssignedTasks), tasksText(m.TasksPendingRevocation), tasksText(m.TargetTasks)
		}
		rows = append(rows, []string{m.MemberID, dash(m.ClientID), dash(m.ClientHost), dash(m.RackID), sub, optInt(m.MemberEpoch), state,
			assigned, pending, target, reconciled})
	}
	table(w, rows)
}

// table prints rows (a header, then the rows) aligned; "(none)" when there are no
// rows under the header.
func table(w io.Writer, rows [][]string) {
	if len(rows) < 2 {
		fmt.Fprintln(w, "(none)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

// tasksText gives a streams member's tasks, "active 0:0,1 1:0 standby 1:1" (sub-topology
// and partitions, by kind); "-" for none and null.
func tasksText(t *api.Tasks) string {
	if t == nil {
		return "-"
	}
	var parts []string
	for _, k := range []struct {
		name  string
		tasks []api.SubtopologyTasks
	}{{"active", t.Active}, {"standby", t.Standby}, {"warmup", t.Warmup}} {
		if len(k.tasks) == 0 {
			continue
		}
		parts = append(parts, k.name)
		for _, st := range k.tasks {
			ps := make([]string, len(st.Partitions))
			for j, p := range st.Partitions {
				ps[j] = strconv.Itoa(int(p))
			}
			parts = append(parts, st.SubtopologyID+":"+strings.Join(ps, ","))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

// partitionsText gives "orders:0,1 payments:2"; "-" for none and null.
func partitionsText(ts []api.TopicPartitions) string {
	if len(ts) == 0 {
		return "-"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		name := t.Topic
		if name == "" {
			name = t.TopicID // a topic the metadata does not know (deleted)
		}
		ps := make([]string, len(t.Partitions))
		for j, p := range t.Partitions {
			ps[j] = strconv.Itoa(int(p))
		}
		parts[i] = name + ":" + strings.Join(ps, ",")
	}
	return strings.Join(parts, " ")
}

func optInt(p *int32) string {
	if p == nil {
		return "-"
	}
	return strconv.Itoa(int(*p))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func words(s []string) string {
	if len(s) == 0 {
		return "-"
	}
	return strings.Join(s, " ")
}

func quoted(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = strconv.Quote(v)
	}
	return out
}
