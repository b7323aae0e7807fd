package metagen

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
	"github.com/kraftwatch/kraftwatch/observer"
)

// small is a cluster small enough for every test: 20 topics of 3 partitions, RF 3 over
// 6 brokers in 3 racks, Kafka 4.3's metadata.version and features.
func small(t testing.TB) Config {
	t.Helper()
	c, err := ForKafka("4.3.1")
	if err != nil {
		t.Fatal(err)
	}
	c.Topics, c.Partitions, c.Brokers, c.Racks = 20, 3, 6, 3
	return c
}

// fileRecord is one record of a file as decode reads it.
type fileRecord struct {
	offset  int64
	batch   int
	control recordbatch.ControlRecord
	rec     metadata.Record
	version int16
}

// decode reads every batch of a metadata log file with the project's decoders,
// checking CRCs and record framing, and returns the batches and the records.
func decode(t *testing.T, data []byte) ([]recordbatch.Batch, []fileRecord) {
	t.Helper()
	var batches []recordbatch.Batch
	var recs []fileRecord
	valid, err := recordbatch.Scan(data, func(b recordbatch.Batch) error {
		batches = append(batches, b)
		it := b.Iter()
		for it.Next() {
			r := it.Record()
			fr := fileRecord{offset: it.Offset(), batch: len(batches) - 1}
			var err error
			if b.IsControl() {
				fr.control, err = recordbatch.DecodeControl(r.Key, r.Value)
			} else {
				fr.rec, fr.version, err = metadata.Decode(r.Value)
				if r.Key != nil || r.TimestampDelta != 0 || len(r.Headers()) != 0 {
					t.Errorf("offset %d: key %v, timestamp delta %d, %d headers; KRaft writes none", fr.offset, r.Key, r.TimestampDelta, len(r.Headers()))
				}
			}
			if err != nil {
				t.Fatalf("offset %d: %v", fr.offset, err)
			}
			recs = append(recs, fr)
		}
		return it.Err()
	})
	if err != nil || valid != len(data) {
		t.Fatalf("scan: %d of %d bytes valid: %v", valid, len(data), err)
	}
	return batches, recs
}

func TestSnapshotLayout(t *testing.T) {
	c := small(t)
	var buf bytes.Buffer
	st, err := WriteSnapshot(&buf, c)
	if err != nil {
		t.Fatal(err)
	}
	batches, recs := decode(t, buf.Bytes())

	// Batches: contiguous from in-file offset 0, the snapshot epoch, KRaft's header fields.
	next := int64(0)
	for i, b := range batches {
		if b.BaseOffset != next || b.PartitionLeaderEpoch != c.Epoch || b.ProducerID != -1 || b.MaxTimestamp != c.Timestamp {
			t.Errorf("batch %d: base %d epoch %d producer %d time %d", i, b.BaseOffset, b.PartitionLeaderEpoch, b.ProducerID, b.MaxTimestamp)
		}
		next = b.NextOffset()
	}
	if st.Batches != len(batches) || st.Bytes != int64(buf.Len()) || st.LastOffset != next-1 || st.FirstOffset != 0 {
		t.Errorf("stats %+v; file has %d batches, %d bytes, last offset %d", st, len(batches), buf.Len(), next-1)
	}

	// Header batch: SnapshotHeader, KRaftVersion, Voters; footer batch: SnapshotFooter.
	first, last := batches[0], batches[len(batches)-1]
	if !first.IsControl() || !last.IsControl() || len(batches) != 3 {
		t.Fatalf("want control, data, control batches; got %d batches", len(batches))
	}
	wantControl := []recordbatch.ControlType{recordbatch.ControlSnapshotHeader, recordbatch.ControlKRaftVersion, recordbatch.ControlKRaftVoters}
	for i, want := range wantControl {
		if recs[i].control == nil || recs[i].control.ControlType() != want {
			t.Errorf("record %d: %v, want %v", i, recs[i].control, want)
		}
	}
	if h := recs[0].control.(*recordbatch.SnapshotHeaderRecord); h.LastContainedLogTimestamp != c.Timestamp-1 {
		t.Errorf("header timestamp %d", h.LastContainedLogTimestamp)
	}
	if v := recs[2].control.(*recordbatch.VotersRecord); len(v.Voters) != c.Controllers || v.Voters[0].VoterID != c.ControllerID(0) {
		t.Errorf("voters %+v", v)
	}
	if f := recs[len(recs)-1].control; f == nil || f.ControlType() != recordbatch.ControlSnapshotFooter {
		t.Errorf("last record %v, want the footer", f)
	}

	// Data records in MetadataImage.write's order, at the versions of MV 4.3-IV0.
	data := recs[3 : len(recs)-1]
	if int64(len(data)) != c.NumRecords() || st.Records != c.NumRecords() {
		t.Fatalf("%d data records (stats %d), want %d", len(data), st.Records, c.NumRecords())
	}
	type want struct {
		typ     metadata.RecordType
		version int16
	}
	var wants []want
	for range 1 + len(c.Features) {
		wants = append(wants, want{metadata.TypeFeatureLevel, 0})
	}
	for range c.Brokers {
		wants = append(wants, want{metadata.TypeRegisterBroker, 4})
	}
	for range c.Controllers {
		wants = append(wants, want{metadata.TypeRegisterController, 0})
	}
	for range c.Topics {
		wants = append(wants, want{metadata.TypeTopic, 0})
		for range c.Partitions {
			wants = append(wants, want{metadata.TypePartition, 2})
		}
	}
	for i, w := range wants {
		if data[i].rec.Type() != w.typ || data[i].version != w.version {
			t.Fatalf("data record %d: %v v%d, want %v v%d", i, data[i].rec.Type(), data[i].version, w.typ, w.version)
		}
	}
	if f := data[0].rec.(*metadata.FeatureLevelRecord); f.Name != "metadata.version" || f.FeatureLevel != 30 {
		t.Errorf("first record %+v, want metadata.version 30", f)
	}
	if b := data[1+len(c.Features)].rec.(*metadata.RegisterBrokerRecord); b.Rack == nil || *b.Rack != "rack-0" || b.CordonedLogDirs == nil {
		t.Errorf("first broker %+v", b)
	}
	if st.ByType[metadata.TypePartition] != c.NumPartitions() || st.ByType[metadata.TypeTopic] != int64(c.Topics) {
		t.Errorf("stats by type %v", st.ByType)
	}
}

// TestBatching: batches hold whole groups of GroupSize records and never exceed the
// limit.
func TestBatching(t *testing.T) {
	c := small(t)
	c.Topics, c.Partitions, c.MaxBatchBytes = 300, 100, 1<<20 // ~3.4 MB of records
	var buf bytes.Buffer
	st, err := WriteSnapshot(&buf, c)
	if err != nil {
		t.Fatal(err)
	}
	batches, _ := decode(t, buf.Bytes())
	if len(batches) < 5 {
		t.Fatalf("%d batches; want the records cut into several", len(batches))
	}
	data := batches[1 : len(batches)-1]
	total := int64(0)
	for i, b := range data {
		if b.Size() > c.MaxBatchBytes {
			t.Errorf("batch %d: %d bytes > %d", i, b.Size(), c.MaxBatchBytes)
		}
		if n := b.LastOffsetDelta + 1; i < len(data)-1 && n%GroupSize != 0 {
			t.Errorf("batch %d: %d records, not whole groups of %d", i, n, GroupSize)
		}
		if i < len(data)-1 && b.Size() < c.MaxBatchBytes-200*GroupSize {
			t.Errorf("batch %d: %d bytes; the next group would have fit", i, b.Size())
		}
		total += int64(b.LastOffsetDelta) + 1
	}
	if total != c.NumRecords() || st.MaxBatch > c.MaxBatchBytes {
		t.Errorf("%d records, largest batch %d", total, st.MaxBatch)
	}

	// A group of 1024 records that cannot fit is an error, not a bigger batch.
	c.Topics, c.Partitions, c.ReplicationFactor = 1, 2*GroupSize, 6 // records of ~200 bytes: fits
	if _, err := WriteSnapshot(&bytes.Buffer{}, c); err != nil {
		t.Errorf("RF 6: %v", err)
	}
	c.Brokers, c.ReplicationFactor = 64, 64 // records of ~1.6 KB: 1024 of them exceed 1 MiB
	if _, err := WriteSnapshot(&bytes.Buffer{}, c); !errors.Is(err, ErrConfig) {
		t.Errorf("RF 64 with 1 MiB batches: %v, want ErrConfig", err)
	}
}

func TestDeterministic(t *testing.T) {
	c := small(t)
	var a, b bytes.Buffer
	if _, err := WriteSnapshot(&a, c); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteSnapshot(&b, c); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("two writes of one Config differ")
	}
	c.Seed++
	b.Reset()
	if _, err := WriteSnapshot(&b, c); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("another seed gives the same bytes")
	}
}

// TestObserverLoads: kraftwatch's own loader reads the directory WriteDir writes, and
// its image is the cluster of the Config, for every release and metadata.version.
func TestObserverLoads(t *testing.T) {
	for _, tc := range []struct {
		name    string
		release string
		mv      int16
		changes int
		racks   int
		order   Order
	}{
		{name: "4.3.1", release: "4.3.1"},
		{name: "4.1.1", release: "4.1.1"},
		{name: "4.4.0", release: "4.4.0"},
		{name: "4.3.1 with segment", release: "4.3.1", changes: 150},
		{name: "4.3.1 segment past one round", release: "4.3.1", changes: 130},
		{name: "no racks", release: "4.3.1", racks: -1},
		{name: "MV 3.3-IV3", release: "4.3.1", mv: 7},
		{name: "MV 3.7-IV0", release: "4.3.1", mv: 15},
		{name: "MV 3.7-IV2", release: "4.3.1", mv: 17, changes: 10},
		{name: "rolling, two brokers", release: "4.3.1", changes: 25, order: OrderRolling},
		{name: "rolling past one restart", release: "4.3.1", changes: 150, order: OrderRolling},
		{name: "MV 4.0-IV1", release: "4.3.1", mv: 23},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ForKafka(tc.release)
			if err != nil {
				t.Fatal(err)
			}
			c.Topics, c.Partitions, c.Brokers, c.Racks = 20, 3, 6, 3
			if tc.mv != 0 {
				c.MetadataVersion = tc.mv
			}
			if tc.racks < 0 {
				c.Racks = 0
			}
			c.Order = tc.order
			dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
			files, err := WriteDir(dir, c, tc.changes)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(files.Snapshot) != c.SnapshotName() || (tc.changes > 0) != (files.Segment != "") {
				t.Fatalf("files %+v", files)
			}
			entries, _ := os.ReadDir(dir)
			if want := 1 + min(tc.changes, 1); len(entries) != want {
				t.Errorf("%d files in the dir, want %d (no .part left)", len(entries), want)
			}
			l, err := observer.Load(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if l.Snapshot != files.Snapshot || l.SnapshotEnd != c.SnapshotEndOffset() {
				t.Errorf("loaded snapshot %s at %d", l.Snapshot, l.SnapshotEnd)
			}
			if err := c.Check(l.Image, tc.changes); err != nil {
				t.Error(err)
			}
			want := c.SnapshotEndOffset() - 1 // the snapshot's last contained offset
			if tc.changes > 0 {
				want = files.SegmentStats.LastOffset
			}
			if got := l.Image.Provenance().Offset; got != want {
				t.Errorf("image at offset %d, want %d", got, want)
			}
		})
	}
}

func TestCheckFindsDifferences(t *testing.T) {
	c := small(t)
	dir := filepath.Join(t.TempDir(), "__cluster_metadata-0")
	if _, err := WriteDir(dir, c, 5); err != nil {
		t.Fatal(err)
	}
	l, err := observer.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(c *Config) (changes int){
		"changes ignored": func(c *Config) int { return 0 },
		"other seed":      func(c *Config) int { c.Seed++; return 5 },
		"more topics":     func(c *Config) int { c.Topics++; return 5 },
		"other racks":     func(c *Config) int { c.Racks = 2; return 5 },
		"other MV":        func(c *Config) int { c.MetadataVersion--; return 5 },
		"rolling order":   func(c *Config) int { c.Order = OrderRolling; return 5 },
	} {
		c2 := c
		if err := c2.Check(l.Image, mutate(&c2)); err == nil {
			t.Errorf("%s: Check found no difference", name)
		}
	}
	if err := c.Check(l.Image, 5); err != nil {
		t.Errorf("unchanged: %v", err)
	}
}

func TestValidate(t *testing.T) {
	for name, mutate := range map[string]func(c *Config){
		"negative topics":      func(c *Config) { c.Topics = -1 },
		"no partitions":        func(c *Config) { c.Partitions = 0 },
		"no brokers":           func(c *Config) { c.Brokers = 0 },
		"RF above brokers":     func(c *Config) { c.ReplicationFactor = 7 },
		"RF 0":                 func(c *Config) { c.ReplicationFactor = 0 },
		"more racks":           func(c *Config) { c.Racks = 7 },
		"MV too old":           func(c *Config) { c.MetadataVersion = 6 },
		"MV unknown":           func(c *Config) { c.MetadataVersion = MaxMetadataVersion + 1 },
		"kraft.version 2":      func(c *Config) { c.KRaftVersion = 2 },
		"voters without ctrl":  func(c *Config) { c.Controllers = 0 },
		"batch limit too big":  func(c *Config) { c.MaxBatchBytes = MaxBatchBytes + 1 },
		"batch limit too low":  func(c *Config) { c.MaxBatchBytes = 1000 },
		"metadata.version dup": func(c *Config) { c.Features = append(c.Features, Feature{"metadata.version", 1}) },
		"feature level 0":      func(c *Config) { c.Features = []Feature{{"group.version", 0}} },
		"brokers hit ctrl ids": func(c *Config) { c.Brokers, c.ReplicationFactor = ControllerIDBase, 1 },
		"unknown order":        func(c *Config) { c.Order = OrderUnknown },
		"rolling with RF 1":    func(c *Config) { c.Order, c.ReplicationFactor = OrderRolling, 1 },
	} {
		c := small(t)
		mutate(&c)
		if err := c.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: Validate = %v, want ErrConfig", name, err)
		}
		if _, err := WriteSnapshot(&bytes.Buffer{}, c); !errors.Is(err, ErrConfig) {
			t.Errorf("%s: WriteSnapshot = %v, want ErrConfig", name, err)
		}
	}
	c := small(t)
	if err := c.Validate(); err != nil {
		t.Errorf("small: %v", err)
	}
	if _, err := ForKafka("4.2.0"); !errors.Is(err, ErrUnknownRelease) {
		t.Errorf("ForKafka(4.2.0) = %v, want ErrUnknownRelease", err)
	}
	c.Racks, c.Controllers, c.KRaftVersion = 0, 0, 0
	if err := c.Validate(); err != nil {
		t.Errorf("no racks, no controllers: %v", err)
	}
}

// TestReplicasSpreadRacks: with RF <= racks and brokers a multiple of racks, every
// partition's replicas are on distinct brokers in distinct racks, and leaders are
// spread evenly.
func TestReplicasSpreadRacks(t *testing.T) {
	c, err := ForKafka("4.3.1")
	if err != nil {
		t.Fatal(err)
	}
	c.Topics = 120 // (t+p) mod 12 is then uniform
	leaders := map[int32]int{}
	for tp := range c.Topics {
		for p := range c.Partitions {
			rs := c.Replicas(nil, tp, p)
			racks := map[string]bool{}
			for _, r := range rs {
				racks[c.Rack(r)] = true
			}
			if len(racks) != c.ReplicationFactor {
				t.Fatalf("topic %d partition %d: replicas %v in racks %v", tp, p, rs, racks)
			}
			leaders[rs[0]]++
		}
	}
	for id, n := range leaders {
		if want := c.Topics * c.Partitions / c.Brokers; n != want {
			t.Errorf("broker %d leads %d partitions, want %d", id, n, want)
		}
	}
}

// TestRollingRestart reads back the segment of OrderRolling: broker by broker, its
// controlled shutdown moves exactly the partitions it leads to their second replica,
// topic by topic, in batches of at most ShutdownBatchRecords; the preferred leader
// election then moves each back, spread over the topics, in batches of at most
// ElectionBatchRecords; LeadersAfter tells the leaders and epochs the bytes give.
func TestRollingRestart(t *testing.T) {
	c := small(t)
	c.Topics, c.Partitions, c.Order = 700, 100, OrderRolling // each of 6 brokers leads ~11.7k: two shutdown batches
	np := int(c.NumPartitions())
	ledBy := map[int32]int{} // partitions each broker leads in the snapshot
	for k := range np {
		ledBy[c.Replicas(nil, k/c.Partitions, k%c.Partitions)[0]]++
	}
	changes := 2*np + 2*ledBy[1] + 500 // a whole restart, then broker 1 again, then part of broker 2's shutdown
	var buf bytes.Buffer
	if _, err := WriteSegment(&buf, c, changes); err != nil {
		t.Fatal(err)
	}
	batches, recs := decode(t, buf.Bytes())
	leaders, moves := make([]int32, np), make([]int32, np)
	index := map[UUID]int{}
	for tp := range c.Topics {
		index[c.TopicID(tp)] = tp
		for p := range c.Partitions {
			leaders[tp*c.Partitions+p] = c.Replicas(nil, tp, p)[0]
		}
	}
	type phase struct {
		broker   int32
		shutdown bool
		batches  map[int]bool
		parts    map[int]bool
		topics   []int // topic of each change in order
	}
	var phases []*phase
	for _, r := range recs[1:] { // after the LeaderChange control record
		pc, ok := r.rec.(*metadata.PartitionChangeRecord)
		if !ok || pc.Leader < 0 || pc.ISR != nil || pc.Replicas != nil {
			t.Fatalf("offset %d: %+v, want a PartitionChangeRecord that moves only the leader", r.offset, r.rec)
		}
		tp := index[pc.TopicID]
		k := tp*c.Partitions + int(pc.PartitionID)
		replicas := c.Replicas(nil, tp, int(pc.PartitionID))
		shutdown := pc.Leader == replicas[1]
		if !shutdown && (pc.Leader != replicas[0] || leaders[k] != replicas[1]) ||
			shutdown && leaders[k] != replicas[0] {
			t.Fatalf("offset %d: %s-%d from leader %d to %d; replicas %v", r.offset, c.TopicName(tp), pc.PartitionID, leaders[k], pc.Leader, replicas)
		}
		if n := len(phases); n == 0 || phases[n-1].broker != replicas[0] || phases[n-1].shutdown != shutdown {
			phases = append(phases, &phase{broker: replicas[0], shutdown: shutdown, batches: map[int]bool{}, parts: map[int]bool{}})
		}
		ph := phases[len(phases)-1]
		if ph.parts[k] {
			t.Fatalf("offset %d: %s-%d moved twice in one phase", r.offset, c.TopicName(tp), pc.PartitionID)
		}
		ph.batches[r.batch], ph.parts[k] = true, true
		ph.topics = append(ph.topics, tp)
		leaders[k] = pc.Leader
		moves[k]++
	}
	if want := 2*c.Brokers + 2 + 1; len(phases) != want {
		t.Fatalf("%d phases, want %d (shutdown and election per broker)", len(phases), want)
	}
	for i, ph := range phases {
		if want := c.BrokerID(i / 2 % c.Brokers); ph.broker != want || ph.shutdown != (i%2 == 0) {
			t.Fatalf("phase %d: broker %d shutdown %v, want broker %d", i, ph.broker, ph.shutdown, want)
		}
		per, led := ElectionBatchRecords, ledBy[ph.broker]
		if ph.shutdown {
			per = ShutdownBatchRecords
		}
		if i == len(phases)-1 {
			led = 500
		}
		if len(ph.parts) != led {
			t.Errorf("phase %d: %d partitions moved, want the %d broker %d leads", i, len(ph.parts), led, ph.broker)
		}
		if want := (len(ph.parts) + per - 1) / per; len(ph.batches) != want {
			t.Errorf("phase %d: %d batches for %d changes, want %d of <= %d", i, len(ph.batches), len(ph.parts), want, per)
		}
		// Topic by topic at a shutdown; spread over the topics at an election.
		runs := 1
		for j := 1; j < len(ph.topics); j++ {
			if ph.topics[j] != ph.topics[j-1] {
				runs++
			}
		}
		if topics := distinct(ph.topics); ph.shutdown && runs != topics || !ph.shutdown && runs < len(ph.topics)*9/10 {
			t.Errorf("phase %d (shutdown %v): %d runs of one topic over %d changes of %d topics", i, ph.shutdown, runs, len(ph.topics), topics)
		}
	}
	for _, b := range batches[1:] {
		if n := int(b.LastOffsetDelta) + 1; n > ShutdownBatchRecords {
			t.Errorf("batch at %d: %d records", b.BaseOffset, n)
		}
	}
	wantLeaders, wantMoves := c.LeadersAfter(changes)
	if !slices.Equal(leaders, wantLeaders) || !slices.Equal(moves, wantMoves) {
		t.Error("LeadersAfter differs from the segment's records")
	}
	after, movesAfter := c.LeadersAfter(2 * np)
	for k := range np {
		if after[k] != c.Replicas(nil, k/c.Partitions, k%c.Partitions)[0] || movesAfter[k] != 2 {
			t.Fatalf("partition %d after a whole restart: leader %d, %d moves; want its preferred leader, 2", k, after[k], movesAfter[k])
		}
	}
}

func distinct(xs []int) int {
	seen := map[int]bool{}
	for _, x := range xs {
		seen[x] = true
	}
	return len(seen)
}
