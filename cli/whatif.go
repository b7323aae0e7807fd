package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kraftwatch/kraftwatch/api"
	"github.com/kraftwatch/kraftwatch/engine"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/whatif"
)

const whatifUsage = `usage: kraftwatch whatif --url URL CHANGES [--json] [--max-rebalances N]
       kraftwatch whatif --bootstrap HOSTS (METADATA_DIR | --bootstrap-controller HOSTS) CHANGES [--json] [--max-rebalances N]
CHANGES: [--reassignment FILE] [--cruise-control FILE] [--add-partitions TOPIC=N]...
         [--delete-topic TOPIC]... [--create-topic TOPIC=N]... [--set-rack BROKER=RACK]...
         [--decommission BROKER [--suggest FILE]]
Which groups the changes would make rebalance, and how often (min-max); nothing is
changed. Asked of a running kraftwatch (--url: POST /v1/whatif), or computed here in
one shot: the metadata log from a dir or the controllers (TLS and SASL from
KRAFTWATCH_CONTROLLER_*), the groups from __consumer_offsets (--bootstrap); the same
answer either way. --suggest writes the reassignment that empties the decommissioned
broker within its rack, for kafka-reassign-partitions --execute, and shows what that
plan does instead.
Exit codes: 0, 1 on an error, 2 on bad usage, 3 when a group would rebalance more
than --max-rebalances times.`

// ExitTooManyRebalances is the exit code of whatif when --max-rebalances is exceeded.
const ExitTooManyRebalances = 3

// repeated is a flag given any number of times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(s string) error { *r = append(*r, s); return nil }

// WhatIf runs `kraftwatch whatif`.
func WhatIf(args []string, stdout, stderr io.Writer) int { return WhatIfEnv(args, nil, stdout, stderr) }

// WhatIfEnv is WhatIf with --bootstrap-controller's TLS and SASL settings read from
// environ (KRAFTWATCH_CONTROLLER_*).
func WhatIfEnv(args, environ []string, stdout, stderr io.Writer) int {
	return whatIf(args, stdout, stderr, func(dir, controllers, bootstrap string) (*image.Image, *groups.State, error) {
		im, state, _, err := inspectInputs(dir, controllers, environ, bootstrap, hashcache.SchemeKafka, stderr)
		return im, state, err
	})
}

// loadInputs loads what a one-shot what-if reads: the image of the metadata log dir
// (or of the controllers') and the groups of __consumer_offsets read from bootstrap.
type loadInputs func(dir, controllers, bootstrap string) (*image.Image, *groups.State, error)

func whatIf(args []string, stdout, stderr io.Writer, load loadInputs) int {
	fs := flag.NewFlagSet("whatif", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("url", "", "a running kraftwatch's HTTP address (http://host:8080)")
	bootstrap := fs.String("bootstrap", "", "without --url: Kafka bootstrap servers, to read the groups from __consumer_offsets")
	controllers := fs.String("bootstrap-controller", "", "without --url: "+controllerFlagHelp)
	reassignment := fs.String("reassignment", "", "a kafka-reassign-partitions plan file (JSON)")
	cruise := fs.String("cruise-control", "", "Cruise Control's proposals (GET /kafkacruisecontrol/proposals?json=true)")
	var adds, deletes, creates, racks, decommission repeated
	fs.Var(&adds, "add-partitions", "TOPIC=N: raise TOPIC to N partitions (repeatable)")
	fs.Var(&deletes, "delete-topic", "TOPIC: delete it (repeatable)")
	fs.Var(&creates, "create-topic", "TOPIC=N: create it with N partitions (repeatable)")
	fs.Var(&racks, "set-rack", "BROKER=RACK: restart BROKER with broker.rack=RACK (repeatable)")
	fs.Var(&decommission, "decommission", "BROKER: unregister it once the moves completed (repeatable)")
	suggest := fs.String("suggest", "", "with one --decommission: write the rack-neutral plan to this file (- for stdout)")
	asJSON := fs.Bool("json", false, "print the answer as JSON (POST /v1/whatif's)")
	maxRebalances := fs.Int("max-rebalances", -1, "exit 3 when a group would rebalance more than this many times")
	if code, ok := parseArgs(fs, args, whatifUsage, func() bool {
		if *suggest != "" && len(decommission) != 1 {
			return false
		}
		if *base != "" {
			return *bootstrap == "" && *controllers == "" && fs.NArg() == 0
		}
		return *bootstrap != "" && oneSource(fs.NArg(), *controllers) == nil
	}); !ok {
		return code
	}
	req, plan, err := whatifRequest(*reassignment, *cruise, adds, deletes, creates, racks, decommission, *suggest != "")
	if err != nil {
		fmt.Fprintf(stderr, "kraftwatch whatif: %v\n", err)
		return 2
	}
	var resp *api.WhatIfResponse
	var raw []byte
	if *base != "" {
		resp, raw, err = postWhatIf(strings.TrimSuffix(*base, "/"), req)
	} else {
		var im *image.Image
		var state *groups.State
		if im, state, err = load(fs.Arg(0), *controllers, *bootstrap); err == nil {
			resp, raw, err = evalWhatIf(im, state, req, plan)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "kraftwatch whatif: %v\n", err)
		return 1
	}
	res, worst := resp.Result, resp.MaxRebalances
	if s := resp.Suggestion; s != nil {
		res, worst = s.Result, s.Result.MaxRebalances()
		if err := writeSuggestion(*suggest, s.Reassignment, stdout); err != nil {
			fmt.Fprintf(stderr, "kraftwatch whatif: %v\n", err)
			return 1
		}
	}
	if *asJSON {
		stdout.Write(raw)
	} else {
		printWhatIf(stdout, resp, res)
	}
	if *maxRebalances >= 0 && worst > *maxRebalances {
		fmt.Fprintf(stderr, "kraftwatch whatif: a group would rebalance up to %d times, more than --max-rebalances %d\n", worst, *maxRebalances)
		return ExitTooManyRebalances
	}
	return 0
}

// evalWhatIf answers req (whose plan is p) over im and state as POST /v1/whatif does
// (api.WhatIf), and gives the JSON that endpoint would send.
func evalWhatIf(im *image.Image, state *groups.State, req *api.WhatIfRequest, p whatif.Plan) (*api.WhatIfResponse, []byte, error) {
	resp, err := api.WhatIf(&engine.View{State: state, Image: im, Synced: true}, req, p)
	if err != nil {
		return nil, nil, err
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(resp); err != nil {
		return nil, nil, err
	}
	return resp, b.Bytes(), nil
}

func whatifRequest(reassignment, cruise string, adds, deletes, creates, racks, decommission []string, suggest bool) (*api.WhatIfRequest, whatif.Plan, error) {
	req := &api.WhatIfRequest{DeleteTopics: deletes, Suggest: suggest}
	var err error
	if reassignment != "" {
		if req.Reassignment, err = os.ReadFile(reassignment); err != nil {
			return nil, whatif.Plan{}, fmt.Errorf("--reassignment: %w", err)
		}
		if _, err := whatif.ParseReassignment(req.Reassignment); err != nil {
			return nil, whatif.Plan{}, fmt.Errorf("--reassignment %s: %w", reassignment, err)
		}
	}
	if cruise != "" {
		if req.CruiseControl, err = os.ReadFile(cruise); err != nil {
			return nil, whatif.Plan{}, fmt.Errorf("--cruise-control: %w", err)
		}
		if _, err := whatif.ParseCruiseControl(req.CruiseControl); err != nil {
			return nil, whatif.Plan{}, fmt.Errorf("--cruise-control %s: %w", cruise, err)
		}
	}
	for _, a := range adds {
		topic, n, err := nameCount(a, "--add-partitions")
		if err != nil {
			return nil, whatif.Plan{}, err
		}
		req.AddPartitions = append(req.AddPartitions, whatif.AddPartitions{Topic: topic, Count: n})
	}
	for _, c := range creates {
		topic, n, err := nameCount(c, "--create-topic")
		if err != nil {
			return nil, whatif.Plan{}, err
		}
		req.CreateTopics = append(req.CreateTopics, whatif.NewTopic{Name: topic, Partitions: n})
	}
	for _, r := range racks {
		b, rack, ok := strings.Cut(r, "=")
		id, err := strconv.ParseInt(b, 10, 32)
		if !ok || err != nil {
			return nil, whatif.Plan{}, fmt.Errorf("--set-rack %q: want BROKER=RACK", r)
		}
		req.SetRacks = append(req.SetRacks, whatif.SetRack{Broker: int32(id), Rack: rack})
	}
	for _, d := range decommission {
		id, err := strconv.ParseInt(d, 10, 32)
		if err != nil {
			return nil, whatif.Plan{}, fmt.Errorf("--decommission %q: want a broker id", d)
		}
		req.Decommission = append(req.Decommission, int32(id))
	}
	p, err := req.Plan()
	if err != nil {
		return nil, p, err
	}
	return req, p, nil
}

func nameCount(s, flagName string) (string, int, error) {
	name, n, ok := strings.Cut(s, "=")
	count, err := strconv.Atoi(n)
	if !ok || name == "" || err != nil || count < 1 {
		return "", 0, fmt.Errorf("%s %q: want TOPIC=N, N a partition count", flagName, s)
	}
	return name, count, nil
}

func postWhatIf(base string, req *api.WhatIfRequest) (*api.WhatIfResponse, []byte, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	u := base + "/v1/whatif"
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Post(u, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("POST %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		var p api.Problem
		json.Unmarshal(raw, &p)
		return nil, nil, fmt.Errorf("POST %s: %s: %s", u, resp.Status, p.Error)
	}
	var out api.WhatIfResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, nil, fmt.Errorf("POST %s: %w", u, err)
	}
	if out.Result == nil || (req.Suggest && (out.Suggestion == nil || out.Suggestion.Result == nil)) {
		return nil, nil, errors.New("POST " + u + ": the answer lacks the prediction (an older kraftwatch?)")
	}
	return &out, raw, nil
}

// writeSuggestion writes the suggested plan, one partition a line: the API's JSON
// encoder has put it on one line.
func writeSuggestion(path string, plan []byte, stdout io.Writer) error {
	moves, err := whatif.ParseReassignment(plan)
	if err != nil {
		return fmt.Errorf("the suggested plan: %w", err)
	}
	plan = whatif.FormatReassignment(moves)
	if path == "-" {
		_, err := stdout.Write(plan)
		return err
	}
	if err := os.WriteFile(path, plan, 0o644); err != nil {
		return fmt.Errorf("--suggest: %w", err)
	}
	return nil
}

func printWhatIf(w io.Writer, resp *api.WhatIfResponse, res *whatif.Result) {
	if s := resp.Suggestion; s != nil {
		fmt.Fprintf(w, "suggested plan: %d moves must change racks, %d cannot move\n", len(s.Changing), len(s.Stuck))
		for _, m := range append(s.Changing, s.Stuck...) {
			fmt.Fprintf(w, "  %s-%d %v -> %v\n", m.Topic, m.Partition, m.From, m.Replicas)
		}
	} else if o := resp.Order; o != nil {
		fmt.Fprintf(w, "order: %d rack-neutral moves first, then %d rack-changing moves\n", len(o.Neutral), len(o.Changing))
	}
	fmt.Fprintf(w, "steps (%s scheme): %s\n", res.Scheme, strings.Join(res.Steps, "; "))
	rows := [][]string{{"GROUP", "TYPE", "REBALANCES", "CAUSES"}}
	for _, g := range res.Groups {
		var causes []string
		for _, t := range g.Topics {
			causes = append(causes, t.Topic+": "+strings.Join(t.Causes, ", "))
		}
		n := strconv.Itoa(g.Min)
		if g.Max != g.Min {
			n += "-" + strconv.Itoa(g.Max)
		}
		rows = append(rows, []string{g.ID, g.Type, n, strings.Join(causes, "; ")})
	}
	table(w, rows)
	fmt.Fprintf(w, "%d groups rebalance, %d more read a touched topic and keep their hash\n", len(res.Groups), res.Unaffected)
}
