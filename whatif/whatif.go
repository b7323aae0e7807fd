package whatif

import (
	"fmt"
	"hash/fnv"
	"iter"
	"maps"
	"slices"
	"strconv"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/groups"
	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
)

// Transition is one change of a group's hash at one step of a plan.
type Transition struct {
	Step string `json:"step"`
	From int64  `json:"from,string"`
	To   int64  `json:"to,string"`
	// Topics are the group's topics whose hash (or existence) changed at the step.
	Topics []string `json:"topics"`
}

// TopicImpact is one topic a group reads that the plan touches.
type TopicImpact struct {
	Topic string `json:"topic"`
	// Moved are the partitions of the topic the plan reassigns; RackChanging those
	// whose completion changes their racks as the scheme counts them (a rebalance
	// each when they complete apart).
	Moved        []int32  `json:"moved,omitempty"`
	RackChanging []int32  `json:"rack_changing,omitempty"`
	Causes       []string `json:"causes"`
}

// GroupImpact is what a plan does to one group.
type GroupImpact struct {
	Group events.GroupKey `json:"-"`
	Type  string          `json:"type"`
	ID    string          `json:"group"`
	// Min and Max bound the number of rebalances: Min when every completion lands in
	// one metadata batch, Max when each rack-changing completion lands on its own.
	Min         int           `json:"min_rebalances"`
	Max         int           `json:"max_rebalances"`
	Hash        int64         `json:"hash,string"`
	FinalHash   int64         `json:"final_hash,string"`
	Topics      []TopicImpact `json:"topics"`
	Transitions []Transition  `json:"transitions"`
}

// Result is the prediction for a whole plan.
type Result struct {
	Scheme string        `json:"scheme"`
	Steps  []string      `json:"steps"`
	Groups []GroupImpact `json:"groups"`
	// Unaffected counts the groups that read a touched topic and keep their hash.
	Unaffected int `json:"unaffected"`
}

// MaxRebalances returns the largest Max of the result's groups, 0 for none.
func (r *Result) MaxRebalances() int {
	m := 0
	for _, g := range r.Groups {
		m = max(m, g.Max)
	}
	return m
}

// MaxPartitions bounds the partition count a plan may give a topic it creates or
// grows: the new partitions are replayed into the hypothetical image.
const MaxPartitions = 1 << 20

// step is one image of the plan's sequence.
type step struct {
	name       string
	img        *image.Image
	touched    map[string]bool
	completion bool
	reassign   bool // the start or the completion of the reassignment
}

// moved is one partition a plan reassigns, as Evaluate resolved it.
type moved struct {
	partition    int32
	rackChanging bool
}

type builder struct {
	img    *image.Image
	steps  []step
	causes map[string][]string
	moves  map[string][]moved
}

func (b *builder) apply(name string, touched []string, recs []metadata.Record) error {
	d := image.NewDelta(b.img)
	for _, r := range recs {
		if err := d.Replay(r); err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalidPlan, name, err)
		}
	}
	img, _ := d.Apply(b.img.Provenance())
	set := make(map[string]bool, len(touched))
	for _, t := range touched {
		set[t] = true
	}
	b.steps = append(b.steps, step{name: name, img: img, touched: set})
	b.img = img
	return nil
}

func (b *builder) cause(topic, c string) { b.causes[topic] = append(b.causes[topic], c) }

// topicsOn returns the topics of img with a replica on broker id, sorted.
func topicsOn(img *image.Image, id int32) []string {
	var out []string
	var buf [][]int32
	for t := range img.Topics() {
		buf = t.AppendReplicas(buf[:0])
		for _, rs := range buf {
			if slices.Contains(rs, id) {
				out = append(out, t.Name())
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// place gives n new partitions replicas round-robin over the registered brokers,
// rf each, starting after start: an approximation of Kafka's placer, which decides
// the racks (and so the final hash) but not whether a group rebalances.
func place(img *image.Image, first, n, rf int) [][]int32 {
	var ids []int32
	for _, br := range img.Brokers() {
		ids = append(ids, br.ID)
	}
	slices.Sort(ids)
	rf = min(max(rf, 1), len(ids))
	out := make([][]int32, n)
	for i := range out {
		for j := range rf {
			out[i] = append(out[i], ids[(first+i+j)%len(ids)])
		}
	}
	return out
}

func replicationFactor(t *image.Topic) int {
	if p, ok := t.Partition(0); ok {
		return len(p.Replicas())
	}
	return 1
}

func partitionRecords(id image.UUID, first int, rs [][]int32) []metadata.Record {
	out := make([]metadata.Record, 0, len(rs))
	for i, r := range rs {
		leader := int32(-1)
		if len(r) > 0 {
			leader = r[0]
		}
		out = append(out, &metadata.PartitionRecord{PartitionID: int32(first + i), TopicID: id, Replicas: r, ISR: r, Leader: leader})
	}
	return out
}

// newTopicID returns a stable id for a topic the plan creates, unused in img.
func newTopicID(img *image.Image, name string) image.UUID {
	h := fnv.New128a()
	h.Write([]byte("whatif:" + name))
	var id image.UUID
	copy(id[:], h.Sum(nil))
	for {
		if _, ok := img.Topic(id); !ok {
			return id
		}
		id[15]++
	}
}

func brokerOf(img *image.Image, id int32, what string) (image.Broker, error) {
	br, ok := img.Broker(id)
	if !ok {
		return br, fmt.Errorf("%w: %s: broker %d is not registered", ErrInvalidPlan, what, id)
	}
	return br, nil
}

// build replays the plan into a sequence of images.
func build(cur *image.Image, p *Plan, scheme hashcache.Scheme) (*builder, error) {
	b := &builder{img: cur, causes: make(map[string][]string), moves: make(map[string][]moved)}
	for _, sr := range p.SetRacks {
		name := fmt.Sprintf("set-rack %d=%s", sr.Broker, sr.Rack)
		br, err := brokerOf(b.img, sr.Broker, name)
		if err != nil {
			return nil, err
		}
		rack := sr.Rack
		rec := &metadata.RegisterBrokerRecord{BrokerID: br.ID, IncarnationID: br.IncarnationID, BrokerEpoch: br.Epoch + 1,
			Rack: &rack, Fenced: br.Fenced, InControlledShutdown: br.InControlledShutdown, LogDirs: br.LogDirs}
		topics := topicsOn(b.img, br.ID)
		for _, t := range topics {
			b.cause(t, fmt.Sprintf("broker %d rack %q -> %q", br.ID, br.Rack, rack))
		}
		if err := b.apply(name, topics, []metadata.Record{rec}); err != nil {
			return nil, err
		}
	}
	for _, ap := range p.AddPartitions {
		name := fmt.Sprintf("add-partitions %s=%d", ap.Topic, ap.Count)
		t, ok := b.img.TopicByName(ap.Topic)
		if !ok {
			return nil, fmt.Errorf("%w: %s: no topic %q", ErrInvalidPlan, name, ap.Topic)
		}
		n := t.NumPartitions()
		if ap.Count > MaxPartitions {
			return nil, fmt.Errorf("%w: %s: at most %d partitions", ErrInvalidPlan, name, MaxPartitions)
		}
		if ap.Count <= n {
			return nil, fmt.Errorf("%w: %s: topic %q has %d partitions already", ErrInvalidPlan, name, ap.Topic, n)
		}
		b.cause(ap.Topic, fmt.Sprintf("partitions %d -> %d", n, ap.Count))
		recs := partitionRecords(t.ID(), n, place(b.img, n, ap.Count-n, replicationFactor(t)))
		if err := b.apply(name, []string{ap.Topic}, recs); err != nil {
			return nil, err
		}
	}
	for _, topic := range p.DeleteTopics {
		name := "delete-topic " + topic
		t, ok := b.img.TopicByName(topic)
		if !ok {
			return nil, fmt.Errorf("%w: %s: no topic %q", ErrInvalidPlan, name, topic)
		}
		b.cause(topic, "deleted")
		if err := b.apply(name, []string{topic}, []metadata.Record{&metadata.RemoveTopicRecord{TopicID: t.ID()}}); err != nil {
			return nil, err
		}
	}
	for _, nt := range p.CreateTopics {
		name := fmt.Sprintf("create-topic %s", nt.Name)
		if _, ok := b.img.TopicByName(nt.Name); ok || nt.Name == "" || nt.Partitions < 1 || nt.Partitions > MaxPartitions || nt.ReplicationFactor < 0 {
			return nil, fmt.Errorf("%w: %s: the topic exists, has no name, or a partition count outside 1 to %d, or a negative replication factor", ErrInvalidPlan, name, MaxPartitions)
		}
		rf := nt.ReplicationFactor
		if rf == 0 {
			rf = 1
			for _, t := range b.img.SortedTopics() {
				rf = replicationFactor(t)
				break
			}
		}
		id := newTopicID(b.img, nt.Name)
		recs := append([]metadata.Record{&metadata.TopicRecord{Name: nt.Name, TopicID: id}}, partitionRecords(id, 0, place(b.img, 0, nt.Partitions, rf))...)
		b.cause(nt.Name, fmt.Sprintf("created with %d partitions", nt.Partitions))
		if err := b.apply(name, []string{nt.Name}, recs); err != nil {
			return nil, err
		}
	}
	if len(p.Moves) > 0 {
		if err := b.moveSteps(p.Moves, scheme); err != nil {
			return nil, err
		}
	}
	for _, id := range p.Decommission {
		name := fmt.Sprintf("decommission %d", id)
		br, err := brokerOf(b.img, id, name)
		if err != nil {
			return nil, err
		}
		topics := topicsOn(b.img, id)
		for _, t := range topics {
			b.cause(t, fmt.Sprintf("broker %d unregistered while holding replicas", id))
		}
		if err := b.apply(name, topics, []metadata.Record{&metadata.UnregisterBrokerRecord{BrokerID: id, BrokerEpoch: br.Epoch}}); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// moveSteps adds the start of a reassignment and its completions.
func (b *builder) moveSteps(moves []Move, scheme hashcache.Scheme) error {
	type pendingMove struct {
		id     image.UUID
		part   int32
		target []int32
	}
	// Sized once, and the touched topics kept as a set: BenchmarkEvaluate.
	start := make([]metadata.Record, 0, len(moves))
	done := make([]metadata.Record, 0, len(moves))
	pending := make([]pendingMove, 0, len(moves))
	var touched []string
	seenTopic := make(map[string]bool)
	shrunk := make(map[string]int)    // moves that remove replicas and add none, per topic
	reordered := make(map[string]int) // moves that keep the replicas in another order, per topic
	type topicPart struct {
		topic string
		part  int32
	}
	seen := make(map[topicPart]bool, len(moves))
	for _, m := range moves {
		where := reassignmentOf(m)
		t, ok := b.img.TopicByName(m.Topic)
		if !ok {
			return fmt.Errorf("%w: %s: no topic %q", ErrInvalidPlan, where, m.Topic)
		}
		p, ok := t.Partition(m.Partition)
		if !ok {
			return fmt.Errorf("%w: %s: topic %q has no partition %d", ErrInvalidPlan, where, m.Topic, m.Partition)
		}
		if seen[topicPart{m.Topic, m.Partition}] {
			return fmt.Errorf("%w: %s: the partition is listed twice", ErrInvalidPlan, where)
		}
		seen[topicPart{m.Topic, m.Partition}] = true
		if len(m.Replicas) == 0 {
			return fmt.Errorf("%w: %s: no replicas", ErrInvalidPlan, where)
		}
		for i, r := range m.Replicas {
			if slices.Contains(m.Replicas[:i], r) {
				return fmt.Errorf("%w: %s: broker %d listed twice", ErrInvalidPlan, where, r)
			}
			if _, ok := b.img.Broker(r); !ok {
				return fmt.Errorf("%w: %s: broker %d is not registered", ErrInvalidPlan, where, r)
			}
		}
		cur := p.Replicas()
		if m.From != nil && !slices.Equal(m.From, cur) {
			return fmt.Errorf("%w: %s: the plan's old replicas %v differ from the cluster's %v (the plan is stale)", ErrInvalidPlan, where, m.From, cur)
		}
		if slices.Equal(cur, m.Replicas) {
			continue
		}
		adding := difference(m.Replicas, cur)
		removing := difference(cur, m.Replicas)
		target := slices.Clone(m.Replicas)
		if !seenTopic[m.Topic] {
			seenTopic[m.Topic] = true
			touched = append(touched, m.Topic)
		}
		if len(adding) == 0 {
			// Nothing to copy: Kafka's controller completes the change at once.
			start = append(start, completion(t.ID(), m.Partition, target))
			if len(removing) == 0 {
				reordered[m.Topic]++
			} else {
				shrunk[m.Topic]++
			}
			continue
		}
		merged := append(slices.Clone(target), removing...)
		rec := metadata.NewPartitionChangeRecord(t.ID(), m.Partition)
		rec.Replicas, rec.AddingReplicas, rec.RemovingReplicas = merged, adding, removing
		start = append(start, rec)
		done = append(done, completion(t.ID(), m.Partition, target))
		pending = append(pending, pendingMove{t.ID(), m.Partition, target})
	}
	slices.Sort(touched)
	touched = slices.Compact(touched)
	if err := b.apply("reassignment start", touched, start); err != nil {
		return err
	}
	b.steps[len(b.steps)-1].reassign = true
	// Which completions change their partition's part of the topic hash: hash the
	// partition alone, during and after, with the racks of the started image.
	cl := hashcache.ImageCluster{Image: b.img}
	var doneTopics []string
	for _, pt := range pending {
		t, _ := b.img.Topic(pt.id)
		p, _ := t.Partition(pt.part)
		changing := scheme.TopicHash(single(p.Replicas()), cl) != scheme.TopicHash(single(pt.target), cl)
		b.moves[t.Name()] = append(b.moves[t.Name()], moved{partition: pt.part, rackChanging: changing})
		doneTopics = append(doneTopics, t.Name())
	}
	for _, name := range touched {
		ms := b.moves[name]
		slices.SortFunc(ms, func(a, c moved) int { return int(a.partition - c.partition) })
		changing := 0
		for _, m := range ms {
			if m.rackChanging {
				changing++
			}
		}
		if len(ms) > 0 {
			b.cause(name, fmt.Sprintf("%d partitions reassigned, %d of them change the hash on completion", len(ms), changing))
		}
		if n := shrunk[name]; n > 0 {
			b.cause(name, fmt.Sprintf("%d partitions lose replicas without adding any (done at once)", n))
		}
		if n := reordered[name]; n > 0 {
			b.cause(name, fmt.Sprintf("%d partitions keep their replicas in another order (done at once)", n))
		}
	}
	slices.Sort(doneTopics)
	if len(done) == 0 {
		return nil
	}
	if err := b.apply("reassignment completion", slices.Compact(doneTopics), done); err != nil {
		return err
	}
	b.steps[len(b.steps)-1].completion = true
	b.steps[len(b.steps)-1].reassign = true
	return nil
}

func reassignmentOf(m Move) string {
	return "reassignment of " + m.Topic + "-" + strconv.Itoa(int(m.Partition))
}

func completion(id image.UUID, part int32, target []int32) metadata.Record {
	rec := metadata.NewPartitionChangeRecord(id, part)
	rec.Replicas, rec.ISR, rec.AddingReplicas, rec.RemovingReplicas = target, target, []int32{}, []int32{}
	rec.Leader = target[0]
	return rec
}

// difference returns the ids of a not in b, ascending (Kafka's TreeSet).
func difference(a, b []int32) []int32 {
	out := []int32{}
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// single is one partition alone as a hashcache.Topic.
type single []int32

func (single) ID() [16]byte           { return [16]byte{} }
func (single) Name() string           { return "" }
func (single) NumPartitions() int     { return 1 }
func (s single) Replicas(int) []int32 { return s }

// names is an image's topic names as groups.TopicNames.
type names struct{ img *image.Image }

func (n names) Contains(name string) bool { _, ok := n.img.TopicByName(name); return ok }
func (n names) All() iter.Seq[string] {
	return func(yield func(string) bool) {
		for t := range n.img.Topics() {
			if !yield(t.Name()) {
				return
			}
		}
	}
}

// Evaluate predicts what plan p does to the groups of st, against the current
// image cur, with the hash scheme the engine uses ("" for the default). It changes
// neither st nor cur.
func Evaluate(cur *image.Image, st *groups.State, scheme string, p Plan) (*Result, error) {
	sch, err := hashcache.NewScheme(scheme)
	if err != nil {
		return nil, err
	}
	b, err := build(cur, &p, sch)
	if err != nil {
		return nil, err
	}
	res := &Result{Scheme: sch.Name(), Steps: []string{}, Groups: []GroupImpact{}}
	touched := make(map[string]bool)
	for _, s := range b.steps {
		res.Steps = append(res.Steps, s.name)
		maps.Copy(touched, s.touched)
	}
	keys := make(map[events.GroupKey]bool)
	for _, topic := range slices.Sorted(maps.Keys(touched)) {
		for _, sub := range st.Subscribers(topic) {
			keys[sub.Group] = true
		}
	}
	ev := evaluator{scheme: sch, steps: append([]step{{name: "now", img: cur}}, b.steps...), touched: touched}
	ev.memo = make([]map[string]topicState, len(ev.steps))
	for i := range ev.memo {
		ev.memo[i] = make(map[string]topicState)
	}
	for _, k := range slices.SortedFunc(maps.Keys(keys), events.GroupKey.Compare) {
		g, ok := ev.group(st, k, b)
		if !ok {
			res.Unaffected++
			continue
		}
		res.Groups = append(res.Groups, g)
	}
	return res, nil
}

type topicState struct {
	hash   int64
	exists bool
	parts  int
}

type evaluator struct {
	scheme  hashcache.Scheme
	steps   []step // steps[0] is the current image
	touched map[string]bool
	memo    []map[string]topicState
	hs      []hashcache.NamedHash
}

// topic returns a topic's hash at step i; untouched topics are hashed once.
func (e *evaluator) topic(i int, name string) topicState {
	if !e.touched[name] {
		i = 0
	}
	if ts, ok := e.memo[i][name]; ok {
		return ts
	}
	var ts topicState
	cl := hashcache.ImageCluster{Image: e.steps[i].img}
	if t, ok := cl.Topic(name); ok {
		ts = topicState{hash: e.scheme.TopicHash(t, cl), exists: true, parts: t.NumPartitions()}
	}
	e.memo[i][name] = ts
	return ts
}

func (e *evaluator) group(st *groups.State, k events.GroupKey, b *builder) (GroupImpact, bool) {
	gi := GroupImpact{Group: k, Type: k.Type.String(), ID: k.ID}
	classic := k.Type == events.ClassicGroup
	var prev []string
	var prevHash int64
	completionChanged, startChanged := false, false
	other := 0 // transitions of the steps other than the reassignment
	var before, after int64
	inMove := false
	read := make(map[string]bool)
	for i := range e.steps {
		topics := st.SubscribedTopics(k, names{e.steps[i].img})
		hs := e.hs[:0]
		for _, name := range topics {
			hs = append(hs, hashcache.NamedHash{Name: name, Hash: e.topic(i, name).hash})
			if e.touched[name] {
				read[name] = true
			}
		}
		h := e.scheme.GroupHash(hs)
		e.hs = hs[:0]
		if i == 0 {
			gi.Hash, prev, prevHash = h, topics, h
			continue
		}
		if e.steps[i].reassign {
			if !inMove {
				before, inMove = prevHash, true
			}
			after = h
		}
		if h != prevHash {
			var changed []string
			for _, name := range union(prev, topics) {
				if !e.steps[i].touched[name] {
					continue
				}
				a, c := e.topic(i-1, name), e.topic(i, name)
				if a.hash != c.hash || a.exists != c.exists || (classic && a.parts != c.parts) {
					if !classic || a.exists != c.exists || a.parts != c.parts {
						changed = append(changed, name)
					}
				}
			}
			if len(changed) > 0 {
				gi.Transitions = append(gi.Transitions, Transition{Step: e.steps[i].name, From: prevHash, To: h, Topics: changed})
				switch {
				case e.steps[i].completion:
					completionChanged = true
				case e.steps[i].reassign:
					startChanged = true
				default:
					other++
				}
			}
		}
		prev, prevHash = topics, h
	}
	gi.FinalHash = prevHash
	// Fewest: the reassignment's start and completions land between two heartbeats
	// of the group, so the coordinator sees only its net change.
	gi.Min = other
	if (startChanged || completionChanged) && before != after {
		gi.Min++
	}
	racky := 0
	for _, name := range slices.Sorted(maps.Keys(read)) {
		ti := TopicImpact{Topic: name, Causes: append([]string{}, b.causes[name]...)}
		for _, m := range b.moves[name] {
			ti.Moved = append(ti.Moved, m.partition)
			if m.rackChanging {
				ti.RackChanging = append(ti.RackChanging, m.partition)
				racky++
			}
		}
		gi.Topics = append(gi.Topics, ti)
	}
	gi.Max = other
	if startChanged {
		gi.Max++
	}
	if completionChanged {
		gi.Max += max(racky, 1)
	}
	return gi, gi.Max > 0
}

func union(a, b []string) []string {
	out := append(slices.Clone(a), b...)
	slices.Sort(out)
	return slices.Compact(out)
}
