package metagen

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
)

// Stats tells what a writer wrote.
type Stats struct {
	// Batches counts every batch, control batches included; Bytes is the file size;
	// MaxBatch the size of the largest batch.
	Batches  int
	Bytes    int64
	MaxBatch int
	// Records counts the metadata (data) records, ByType them per type;
	// ControlRecords the control records.
	Records        int64
	ByType         map[metadata.RecordType]int64
	ControlRecords int
	// FirstOffset and LastOffset are the offsets of the first and the last record of
	// the file (for a snapshot, positions in the file from 0).
	FirstOffset, LastOffset int64
}

// SegmentBatchRecords is how many records WriteSegment puts in each data batch in
// OrderSequential (a busy controller's batch within its 25 ms linger).
const SegmentBatchRecords = 100

// WriteSnapshot writes the snapshot described by c to w (the layout is in the package
// doc). It fails only for an invalid Config or when w fails.
func WriteSnapshot(w io.Writer, c Config) (Stats, error) {
	if err := c.Validate(); err != nil {
		return Stats{}, err
	}
	b := newBatcher(w, &c, 0, c.Epoch, c.Timestamp)
	header := []recordbatch.ControlRecord{&recordbatch.SnapshotHeaderRecord{LastContainedLogTimestamp: c.Timestamp - 1}}
	if c.KRaftVersion >= 1 {
		header = append(header, &recordbatch.KRaftVersionRecord{KRaftVersion: c.KRaftVersion}, c.voters())
	}
	b.control(header...)

	b.add(&metadata.FeatureLevelRecord{Name: "metadata.version", FeatureLevel: c.MetadataVersion}, 0)
	for _, f := range c.Features {
		b.add(&metadata.FeatureLevelRecord{Name: f.Name, FeatureLevel: f.Level}, 0)
	}
	features := c.supportedFeatures()
	for i := range c.Brokers {
		b.add(c.broker(c.BrokerID(i), features), c.RegisterBrokerVersion())
	}
	if c.MetadataVersion >= mvRegisterController {
		for i := range c.Controllers {
			id := c.ControllerID(i)
			b.add(&metadata.RegisterControllerRecord{ControllerID: id, IncarnationID: c.Incarnation(id),
				EndPoints: []metadata.BrokerEndpoint{{Name: "CONTROLLER", Host: host(id), Port: 9093}},
				Features:  features}, 0)
		}
	}
	pv := c.PartitionVersion()
	pr := metadata.PartitionRecord{LeaderEpoch: 0, PartitionEpoch: 0}
	var replicas []int32
	var dirs []UUID
	for t := range c.Topics {
		id := c.TopicID(t)
		b.add(&metadata.TopicRecord{Name: c.TopicName(t), TopicID: id}, 0)
		for p := range c.Partitions {
			replicas = c.Replicas(replicas[:0], t, p)
			pr.PartitionID, pr.TopicID = int32(p), id
			pr.Replicas, pr.ISR, pr.Leader = replicas, replicas, replicas[0]
			if c.HasDirectories() {
				dirs = dirs[:0]
				for _, r := range replicas {
					dirs = append(dirs, c.Directory(r))
				}
				pr.Directories = dirs
			}
			b.add(&pr, pv)
		}
	}
	b.endGroup()
	b.flush(len(b.ends))
	b.control(&recordbatch.SnapshotFooterRecord{})
	return b.finish()
}

// WriteSegment writes the log segment that follows c's snapshot: base offset
// c.SnapshotEndOffset(), a LeaderChangeMessage control batch opening epoch Epoch+1
// (the first controller leads), then changes PartitionChangeRecords, each moving one
// partition's leader, in c.Order and its batches (OrderSequential: SegmentBatchRecords
// per batch); LeadersAfter tells the result.
func WriteSegment(w io.Writer, c Config, changes int) (Stats, error) {
	if err := c.Validate(); err != nil {
		return Stats{}, err
	}
	if changes < 0 || (changes > 0 && c.NumPartitions() == 0) {
		return Stats{}, fmt.Errorf("%w: %d changes of %d partitions", ErrConfig, changes, c.NumPartitions())
	}
	leader, voters := c.BrokerID(0), []int32{c.BrokerID(0)}
	if c.Controllers > 0 {
		leader, voters = c.ControllerID(0), nil
		for i := range c.Controllers {
			voters = append(voters, c.ControllerID(i))
		}
	}
	b := newBatcher(w, &c, c.SnapshotEndOffset(), c.Epoch+1, c.Timestamp+1)
	b.control(&recordbatch.LeaderChangeMessage{LeaderID: leader, Voters: voters, GrantingVoters: voters})
	pv := c.PartitionVersion()
	for ch := range c.changes(changes) {
		rec := metadata.NewPartitionChangeRecord(c.TopicID(ch.k/c.Partitions), int32(ch.k%c.Partitions))
		rec.Leader = ch.leader
		b.add(rec, pv)
		if ch.endsBatch {
			b.endGroup()
			b.flush(len(b.ends))
			b.ts++
		}
	}
	b.endGroup()
	b.flush(len(b.ends))
	return b.finish()
}

// Files are the paths WriteDir wrote.
type Files struct {
	Snapshot      string
	SnapshotStats Stats
	// Segment is "" when no changes were asked for.
	Segment      string
	SegmentStats Stats
}

// WriteDir writes c's snapshot into dir (a __cluster_metadata-0 directory, created if
// needed) under Kafka's name, and with changes > 0 the segment of WriteSegment
// (NNN.log, NNN = the snapshot's end offset). Like Kafka, it writes each file as a
// .part and renames it when complete, so a reader never sees half a file.
func WriteDir(dir string, c Config, changes int) (Files, error) {
	var f Files
	if err := c.Validate(); err != nil {
		return f, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return f, err
	}
	var err error
	f.Snapshot = filepath.Join(dir, c.SnapshotName())
	f.SnapshotStats, err = writeFile(f.Snapshot, func(w io.Writer) (Stats, error) { return WriteSnapshot(w, c) })
	if err != nil || changes == 0 {
		return f, err
	}
	f.Segment = filepath.Join(dir, fmt.Sprintf("%020d.log", c.SnapshotEndOffset()))
	f.SegmentStats, err = writeFile(f.Segment, func(w io.Writer) (Stats, error) { return WriteSegment(w, c, changes) })
	return f, err
}

func writeFile(path string, write func(io.Writer) (Stats, error)) (Stats, error) {
	base := filepath.Base(path)
	tmp, err := os.CreateTemp(filepath.Dir(path), base[:len(base)-len(filepath.Ext(base))]+"-*"+filepath.Ext(base)+".part")
	if err != nil {
		return Stats{}, err
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<20)
	st, err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644) // as Kafka's files; CreateTemp makes 0600
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return st, err
}

// supportedFeatures is what every node of the cluster supports: metadata.version from
// the oldest 4.x level to the cluster's, kraft.version 0-1, each finalized feature from
// 0 to its level.
func (c *Config) supportedFeatures() []metadata.BrokerFeature {
	fs := []metadata.BrokerFeature{
		{Name: "metadata.version", MinSupportedVersion: MinMetadataVersion, MaxSupportedVersion: c.MetadataVersion},
		{Name: "kraft.version", MinSupportedVersion: 0, MaxSupportedVersion: 1},
	}
	for _, f := range c.Features {
		fs = append(fs, metadata.BrokerFeature{Name: f.Name, MaxSupportedVersion: f.Level})
	}
	return fs
}

func host(id int32) string { return fmt.Sprintf("node-%d.kafka.internal", id) }

func (c *Config) broker(id int32, features []metadata.BrokerFeature) *metadata.RegisterBrokerRecord {
	r := &metadata.RegisterBrokerRecord{
		BrokerID:      id,
		IncarnationID: c.Incarnation(id),
		BrokerEpoch:   int64(100 + id),
		EndPoints:     []metadata.BrokerEndpoint{{Name: "PLAINTEXT", Host: host(id), Port: 9092}},
		Features:      features,
	}
	if rack := c.Rack(id); rack != "" {
		r.Rack = &rack
	}
	if c.HasDirectories() {
		r.LogDirs = []UUID{c.Directory(id)}
	}
	if c.RegisterBrokerVersion() >= 4 {
		r.CordonedLogDirs = []UUID{} // what Kafka 4.3 writes: present and empty
	}
	return r
}

func (c *Config) voters() *recordbatch.VotersRecord {
	v := &recordbatch.VotersRecord{}
	for i := range c.Controllers {
		id := c.ControllerID(i)
		v.Voters = append(v.Voters, recordbatch.Voter{VoterID: id, VoterDirectoryID: c.Directory(id),
			Endpoints:           []recordbatch.VoterEndpoint{{Name: "CONTROLLER", Host: host(id), Port: 9093}},
			MinSupportedVersion: 0, MaxSupportedVersion: 1})
	}
	return v
}

// batcher cuts records into batches the way Kafka's snapshot writer does: groups of
// GroupSize records, a group never split, a batch closed when the next group would
// not fit in maxBatch bytes.
type batcher struct {
	w     io.Writer
	max   int
	epoch int32
	ts    int64
	next  int64 // offset of the next record
	st    Stats

	vals       []byte // values of the open batch's records, back to back
	ends       []int  // end of each value in vals
	groupStart int    // index in ends of the open group's first record
	size       int    // encoded size of the records before groupStart
	out        []byte
	recs       []recordbatch.Record
	err        error
}

func newBatcher(w io.Writer, c *Config, base int64, epoch int32, ts int64) *batcher {
	return &batcher{w: w, max: c.maxBatch(), epoch: epoch, ts: ts, next: base,
		st: Stats{ByType: map[metadata.RecordType]int64{}, FirstOffset: base, LastOffset: base - 1}}
}

// add encodes rec at version v into the open group.
func (b *batcher) add(rec metadata.Record, v int16) {
	if b.err != nil {
		return
	}
	b.vals, b.err = metadata.Append(b.vals, rec, v)
	b.ends = append(b.ends, len(b.vals))
	b.st.Records++
	b.st.ByType[rec.Type()]++
	if len(b.ends)-b.groupStart == GroupSize {
		b.endGroup()
	}
}

// endGroup adds the open group to the open batch, first writing out the batch when
// the group would not fit.
func (b *batcher) endGroup() {
	if b.err != nil || b.groupStart == len(b.ends) {
		return
	}
	g := b.recordsSize(b.groupStart, len(b.ends))
	if recordbatch.HeaderSize+b.size+g > b.max && b.groupStart > 0 {
		b.flush(b.groupStart)
		g = b.recordsSize(0, len(b.ends))
	}
	if recordbatch.HeaderSize+b.size+g > b.max {
		b.err = fmt.Errorf("%w: %d records of %d bytes do not fit in a batch of MaxBatchBytes %d",
			ErrConfig, len(b.ends)-b.groupStart, g, b.max)
		return
	}
	b.size += g
	b.groupStart = len(b.ends)
}

// recordsSize is the encoded size of the records [from, to) of the open batch at
// their offset deltas (DefaultRecord: length, attributes, timestamp delta 0, offset
// delta, null key, value, no headers).
func (b *batcher) recordsSize(from, to int) int {
	n := 0
	for i := from; i < to; i++ {
		vl := b.ends[i] - b.start(i)
		body := 1 + 1 + varintLen(int64(i)) + 1 + varintLen(int64(vl)) + vl + 1
		n += varintLen(int64(body)) + body
	}
	return n
}

func (b *batcher) start(i int) int {
	if i == 0 {
		return 0
	}
	return b.ends[i-1]
}

// flush writes the first n records of the open batch as one data batch.
func (b *batcher) flush(n int) {
	if b.err != nil || n == 0 {
		return
	}
	b.recs = b.recs[:0]
	for i := range n {
		b.recs = append(b.recs, recordbatch.Record{OffsetDelta: int32(i), Value: b.vals[b.start(i):b.ends[i]]})
	}
	b.write(recordbatch.AppendBatch(b.out[:0], recordbatch.NewBatchHeader(b.next, b.epoch, b.ts, false), b.recs), n)
	rest := b.ends[n-1]
	b.vals = b.vals[:copy(b.vals, b.vals[rest:])]
	b.ends = b.ends[:copy(b.ends, b.ends[n:])]
	for i := range b.ends {
		b.ends[i] -= rest
	}
	b.groupStart -= n
	b.size = b.recordsSize(0, b.groupStart)
}

func (b *batcher) control(recs ...recordbatch.ControlRecord) {
	if b.err != nil {
		return
	}
	b.st.ControlRecords += len(recs)
	b.write(recordbatch.AppendControlBatch(b.out[:0], recordbatch.NewBatchHeader(b.next, b.epoch, b.ts, true), recs...), len(recs))
}

func (b *batcher) write(batch []byte, n int) {
	b.out = batch
	if _, err := b.w.Write(batch); err != nil {
		b.err = err
		return
	}
	b.st.Batches++
	b.st.Bytes += int64(len(batch))
	b.st.MaxBatch = max(b.st.MaxBatch, len(batch))
	b.next += int64(n)
	b.st.LastOffset = b.next - 1
}

func (b *batcher) finish() (Stats, error) {
	return b.st, b.err
}

func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}
