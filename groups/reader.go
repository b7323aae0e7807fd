package groups

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"
)

// ConsumerOffsetsTopic is the topic the group coordinator writes its records to.
const ConsumerOffsetsTopic = "__consumer_offsets"

// Message is one raw record of __consumer_offsets. Value is nil for a tombstone.
type Message struct {
	Partition int
	Offset    int64
	Key       []byte
	Value     []byte
	// Time is the record's timestamp (the coordinator's append time).
	Time time.Time
}

// ReaderConfig configures a Reader.
type ReaderConfig struct {
	// Brokers are the bootstrap servers, host:port; an entry may also hold several,
	// comma-separated (kafka-go's Transport panics on such an entry, so NewReader
	// splits them).
	Brokers []string
	// Dialer carries TLS and SASL settings; nil means plaintext.
	Dialer *kafka.Dialer
	// Topic defaults to ConsumerOffsetsTopic.
	Topic string
	// Logger receives the reader's logs; nil discards them.
	Logger *slog.Logger
	// StallAfter is how long a partition may stay unreadable, or behind its end offset
	// without progress, before Health reports it (default DefaultStallAfter).
	StallAfter time.Duration
	// RefreshInterval is how often the end offsets, and the brokers to bootstrap
	// from, are read again (default StallAfter/5, at most MaxRefreshInterval). Each
	// leader is asked with a deadline of StallAfter/2 (1 s to 10 s), so a leader that
	// does not answer is reported within StallAfter plus one RefreshInterval.
	RefreshInterval time.Duration
}

// Defaults of ReaderConfig.
const (
	DefaultStallAfter  = 30 * time.Second
	MaxRefreshInterval = 10 * time.Second
)

// Validate reports the first missing or bad setting.
func (c ReaderConfig) Validate() error {
	if len(splitBrokers(c.Brokers)) == 0 {
		return errors.New("groups: no bootstrap servers")
	}
	if c.StallAfter < 0 || c.RefreshInterval < 0 {
		return errors.New("groups: negative StallAfter or RefreshInterval")
	}
	return nil
}

// splitBrokers returns one host:port per entry, splitting comma-separated entries.
func splitBrokers(brokers []string) []string {
	var out []string
	for _, b := range brokers {
		for _, addr := range strings.Split(b, ",") {
			if addr = strings.TrimSpace(addr); addr != "" {
				out = append(out, addr)
			}
		}
	}
	return out
}

// Reader consumes every partition of __consumer_offsets from its earliest offset and
// then follows it, without a consumer group (it commits nothing). The partitions a
// broker leads are fetched together, one Fetch at a time on one connection to that
// broker, in a fetch session (KIP-227) as a follower does; a partition whose leader moves, or whose connection
// breaks, goes to its leader in fresh metadata, so broker restarts and leader moves
// lose nothing. Transactional records are read committed. Run's handler is called
// from one goroutine at a time with one fetch's records of one partition, in offset
// order within a partition.
//
// Partitions are dialed through the configured brokers and every broker the
// cluster's metadata listed (refreshed every RefreshInterval), so losing the bootstrap
// broker does not stop a partition whose leader moved elsewhere. The same refresh asks
// each partition's leader for its end offset, with a deadline: a fetch that times out
// is tried again on a new connection without counting as a failed read, so progress
// is measured against time here. A partition is stalled (Health) when, for StallAfter,
// its reads have failed, or its leader has not answered, or records were written to
// it and none read. Its lag is unknown (-1) while its leader does not answer,
// never a stale 0. Records, Retries, Lag, Partitions, Unlisted and Health are safe to
// call from any goroutine.
type Reader struct {
	cfg      ReaderConfig
	log      *slog.Logger
	now      func() time.Time
	caughtUp chan struct{}
	once     sync.Once
	started  atomic.Int64                // when Run began, unix nanoseconds
	parts    atomic.Pointer[[]partition] // per partition, set by Run
	brokers  atomic.Pointer[[]string]    // bootstrap servers, then those the metadata listed
	listErr  atomic.Pointer[error]       // why the partitions could not be listed, while they cannot
	records  atomic.Int64
	retries  atomic.Int64
}

// Broker is a partition's leader as the last metadata answer named it.
type Broker struct {
	ID   int
	Addr string // host:port
}

func (b Broker) String() string {
	if b.Addr == "" {
		return "no leader"
	}
	return fmt.Sprintf("leader %d (%s)", b.ID, b.Addr)
}

// partition is what the Reader knows of one partition's progress. Times are unix
// nanoseconds; zero means never or not now.
type partition struct {
	next         atomic.Int64 // next offset to hand on
	end          atomic.Int64 // highest end offset known (fetch high watermark or ListOffsets)
	endKnown     atomic.Bool  // the leader answered the last end-offset request (or a fetch since)
	failingSince atomic.Int64 // when the current run of read errors began
	askedSince   atomic.Int64 // when the current run of unanswered end-offset requests began
	behindSince  atomic.Int64 // when the refresh first saw the end grow past next with no progress since
	lastRecord   atomic.Int64 // timestamp of the last record handed on
	caughtUpAt   atomic.Int64 // when next last reached the known end offset
	stalled      atomic.Bool  // reported stalled (for the recovery log line)
	lastErr      atomic.Pointer[error]
	askErr       atomic.Pointer[error] // why the leader did not answer the last request
	leader       atomic.Pointer[Broker]
}

// NewReader returns a Reader; nothing is read before Run.
func NewReader(cfg ReaderConfig) (*Reader, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Brokers = splitBrokers(cfg.Brokers)
	if cfg.Topic == "" {
		cfg.Topic = ConsumerOffsetsTopic
	}
	if cfg.Dialer == nil {
		cfg.Dialer = &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.StallAfter == 0 {
		cfg.StallAfter = DefaultStallAfter
	}
	if cfg.RefreshInterval == 0 {
		cfg.RefreshInterval = min(max(cfg.StallAfter/5, 100*time.Millisecond), MaxRefreshInterval)
	}
	r := &Reader{cfg: cfg, log: cfg.Logger, now: time.Now, caughtUp: make(chan struct{})}
	brokers := slices.Clone(cfg.Brokers)
	r.brokers.Store(&brokers)
	return r, nil
}

// CaughtUp is closed once every partition has been read up to the end offset it had
// when Run started, or as soon as Run finds that the topic does not exist yet (Kafka
// creates it with the first group, so there is nothing to catch up with).
func (r *Reader) CaughtUp() <-chan struct{} { return r.caughtUp }

// Records is the number of records read so far, offset commits included.
func (r *Reader) Records() int64 { return r.records.Load() }

// Retries is the number of failed reads of a partition that were retried after a
// backoff (a failed dial, an error Kafka gave for the partition).
func (r *Reader) Retries() int64 { return r.retries.Load() }

// Unlisted is why Run cannot list the partitions now, at once (Health waits
// StallAfter); nil once they are listed, or while the topic does not exist yet.
func (r *Reader) Unlisted() error {
	if r.parts.Load() != nil {
		return nil
	}
	if errp := r.listErr.Load(); errp != nil && !errors.Is(*errp, kafka.UnknownTopicOrPartition) {
		return *errp
	}
	return nil
}

// Lag is the number of records behind the end offsets of the partitions whose end
// offset is known: the highest end offset known of each partition (from its fetches,
// or asked of its leader every RefreshInterval) minus the next offset to read. A
// partition whose leader does not answer is left out (Partitions gives it as -1).
func (r *Reader) Lag() int64 {
	var total int64
	for _, p := range r.Partitions() {
		total += max(0, p.Records)
	}
	return total
}

// PartitionLag is how far the Reader is behind on one partition.
type PartitionLag struct {
	Partition int
	// Records behind the end offset; -1 when unknown: the leader did not answer the
	// last request for it.
	Records int64
	// Seconds behind: a bound on the age of the oldest record not yet read. That
	// record was written after the last record read and after the Reader last knew
	// the partition caught up, so Seconds is now minus the later of the two: the
	// last record read's timestamp (the coordinator's append time) and the last time
	// the partition's next offset reached its known end offset (Run's start when
	// neither happened). 0 when caught up (Records 0), -1 when unknown. A quiet
	// partition that receives a record shows the time since it was last caught up,
	// not the age of its last record.
	Seconds float64
}

// Partitions is the lag of each partition, nil before Run lists them.
func (r *Reader) Partitions() []PartitionLag {
	parts := r.parts.Load()
	if parts == nil {
		return nil
	}
	now := r.now()
	out := make([]PartitionLag, len(*parts))
	for i := range *parts {
		out[i] = (*parts)[i].lag(i, now, r.started.Load())
	}
	return out
}

func (p *partition) lag(i int, now time.Time, started int64) PartitionLag {
	if !p.endKnown.Load() {
		return PartitionLag{Partition: i, Records: -1, Seconds: -1}
	}
	l := PartitionLag{Partition: i, Records: max(0, p.end.Load()-p.next.Load())}
	if l.Records > 0 {
		since := max(p.lastRecord.Load(), p.caughtUpAt.Load())
		if since == 0 {
			since = started
		}
		l.Seconds = max(0, now.Sub(time.Unix(0, since)).Seconds())
	}
	return l
}

// StallCause is why a partition is stalled.
type StallCause uint8

const (
	// CauseUnknown is the zero StallCause.
	CauseUnknown StallCause = iota
	// CauseReadsFail: every read of the partition has failed since Since.
	CauseReadsFail
	// CauseNoAnswer: the partition's leader has answered neither a fetch nor an
	// end-offset request since Since.
	CauseNoAnswer
	// CauseNoProgress: records have been written to the partition since Since and
	// none read.
	CauseNoProgress
)

func (c StallCause) String() string {
	switch c {
	case CauseReadsFail:
		return "reads fail"
	case CauseNoAnswer:
		return "leader does not answer"
	case CauseNoProgress:
		return "no progress"
	}
	return "unknown"
}

// Stall is a partition Health reports: stalled since Since for Cause; Lag is -1 when
// unknown; Err is the last read or end-offset error.
type Stall struct {
	Partition int
	Since     time.Time
	Cause     StallCause
	Leader    Broker
	Lag       int64
	Err       error
}

// StallError is Health's error: the partitions stalled, or the partitions could not
// be listed at all (Partitions empty, Err set).
type StallError struct {
	Topic      string
	Partitions []Stall
	Err        error
	For        time.Duration
	// Now is when Health looked; each stall's duration is Now - Since.
	Now time.Time
}

func (e *StallError) Error() string {
	if len(e.Partitions) == 0 {
		return fmt.Sprintf("cannot list the partitions of %s for %v: %v", e.Topic, e.For.Round(time.Second), e.Err)
	}
	var b strings.Builder
	for i, s := range e.Partitions {
		if i > 0 {
			b.WriteString("; ")
		}
		d := e.For
		if !e.Now.IsZero() {
			d = e.Now.Sub(s.Since)
		}
		d = d.Round(time.Second)
		behind := "lag unknown"
		if s.Lag >= 0 {
			behind = fmt.Sprintf("%d records behind", s.Lag)
		}
		fmt.Fprintf(&b, "partition %d stalled for %v, %s: ", s.Partition, d, behind)
		switch s.Cause {
		case CauseNoAnswer:
			fmt.Fprintf(&b, "%s has not answered for %v", s.Leader, d)
		case CauseNoProgress:
			fmt.Fprintf(&b, "no record read for %v from %s", d, s.Leader)
		default:
			fmt.Fprintf(&b, "reads from %s fail", s.Leader)
		}
		if s.Err != nil {
			fmt.Fprintf(&b, ": %v", s.Err)
		}
	}
	return fmt.Sprintf("%s: %s", e.Topic, b.String())
}

// Unwrap gives the errors behind the stall, for errors.Is.
func (e *StallError) Unwrap() []error {
	errs := []error{e.Err}
	for _, s := range e.Partitions {
		errs = append(errs, s.Err)
	}
	return errs
}

// Health is nil while every partition is read, else a *StallError naming the stalled
// partitions with their leader and cause (or that the partitions could not be listed
// for StallAfter). A partition is stalled when, for longer than StallAfter, its reads
// have failed, or its leader has answered neither a fetch nor an end-offset request,
// or records were written to it and none read. A partition that is merely quiet is
// healthy, even when compaction left its end offset above its last record.
func (r *Reader) Health() error {
	now := r.now()
	parts := r.parts.Load()
	if parts == nil {
		if errp := r.listErr.Load(); errp != nil && r.started.Load() != 0 && now.Sub(time.Unix(0, r.started.Load())) > r.cfg.StallAfter {
			return &StallError{Topic: r.cfg.Topic, Err: *errp, For: now.Sub(time.Unix(0, r.started.Load()))}
		}
		return nil
	}
	stalls := r.stalls(now)
	if len(stalls) == 0 {
		return nil
	}
	longest := time.Duration(0)
	for _, s := range stalls {
		longest = max(longest, now.Sub(s.Since))
	}
	return &StallError{Topic: r.cfg.Topic, Partitions: stalls, For: longest, Now: now}
}

// Stalled is the number of partitions Health reports stalled.
func (r *Reader) Stalled() int { return len(r.stalls(r.now())) }

func (r *Reader) stalls(now time.Time) []Stall {
	parts := r.parts.Load()
	if parts == nil {
		return nil
	}
	var out []Stall
	for i := range *parts {
		p := &(*parts)[i]
		since, cause := p.stalledSince(now, r.cfg.StallAfter)
		if cause == CauseUnknown {
			continue
		}
		s := Stall{Partition: i, Since: since, Cause: cause, Lag: p.lag(i, now, r.started.Load()).Records}
		if b := p.leader.Load(); b != nil {
			s.Leader = *b
		}
		errp := p.lastErr.Load()
		if cause == CauseNoAnswer || errp == nil {
			errp = p.askErr.Load()
		}
		if errp != nil {
			s.Err = *errp
		}
		out = append(out, s)
	}
	return out
}

// stalledSince reports since when and why the partition has been stalled for longer
// than bound (CauseUnknown: it is not). When several causes hold, the most telling
// wins: a leader that does not answer, then failing reads, then no progress.
func (p *partition) stalledSince(now time.Time, bound time.Duration) (time.Time, StallCause) {
	for _, c := range []struct {
		at    int64
		cause StallCause
	}{{p.askedSince.Load(), CauseNoAnswer}, {p.failingSince.Load(), CauseReadsFail}, {p.behindSince.Load(), CauseNoProgress}} {
		if c.at != 0 && now.Sub(time.Unix(0, c.at)) > bound {
			return time.Unix(0, c.at), c.cause
		}
	}
	return time.Time{}, CauseUnknown
}

// Run reads until ctx ends or handle returns an error. handle gets the records of one
// fetch of one partition at once, in offset order, never an empty batch; it may keep
// the slice. Offset commits (key versions 0 and 1), control records, and the aborted
// transactional offset commits that read_committed still returns (Kafka returns
// them with the aborted transactions' list, for the client to drop), are dropped
// before handle, in the fetched bytes (filterRecords), as nothing downstream reads
// them: Records counts them, Lag and CaughtUp move past them.
func (r *Reader) Run(ctx context.Context, handle func([]Message) error) error {
	r.started.Store(r.now().UnixNano())
	transport := r.transport()
	defer transport.CloseIdleConnections()
	answers, err := r.endOffsets(ctx, transport)
	if err != nil {
		return err
	}
	r.log.Info("reading group records", "topic", r.cfg.Topic, "partitions", len(answers))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	parts := make([]partition, len(answers))
	ends := make([]int64, len(answers))
	for i, a := range answers {
		ends[i] = a.end
		parts[i].end.Store(a.end)
		parts[i].endKnown.Store(true)
		parts[i].leader.Store(&a.leader)
	}
	r.parts.Store(&parts)

	var mu sync.Mutex // serializes handle; guards pending and caught
	pending := 0      // partitions not yet caught up
	caught := make([]bool, len(ends))
	for _, end := range ends {
		if end > 0 {
			pending++
		}
	}
	if pending == 0 {
		r.markCaughtUp()
	}
	var wg sync.WaitGroup
	wg.Go(func() { r.refresh(ctx, transport, parts) })
	fr := &fetcher{r: r, parts: parts, pos: make([]fetchPos, len(parts)), orphans: make(chan []int, len(parts)),
		wg: &wg, fail: cancel}
	for i := range fr.pos {
		fr.pos[i] = fetchPos{next: kafka.FirstOffset, backoff: 250 * time.Millisecond}
	}
	fr.deliver = func(p int, batch []Message, read, next int64) error {
		mu.Lock()
		defer mu.Unlock()
		if len(batch) > 0 {
			if err := handle(batch); err != nil {
				return err
			}
		}
		r.records.Add(read)
		// >=: compaction may have removed the record at end-1, and control records
		// take offsets too.
		if next >= ends[p] && !caught[p] {
			caught[p] = true
			if pending--; pending == 0 {
				r.log.Info("group records caught up", "topic", r.cfg.Topic, "records", r.records.Load())
				r.markCaughtUp()
			}
		}
		return nil
	}
	wg.Go(func() { fr.route(ctx, transport) })
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// Fetches of one leader's partitions (fetchMaxBytes is also each partition's bound).
// While offsets are committed fast, the broker answers a fetch once 64 KiB per
// partition asked for are there (hundreds of records), not at each append: that halves
// kraftwatch's CPU per record and the broker's cost of its fetches against
// MinBytes 1; on a quiet partition a record waits at most fetchMaxWait. bench/offsets.sh
// (its live rounds: commit ceiling with and without kraftwatch, CPU per record,
// rebalance-needed latency during the firehose) guards the pair, and its replay the
// start-up.
const (
	fetchMinBytes = 64 << 10
	fetchMaxBytes = 8 << 20
	fetchMaxWait  = 100 * time.Millisecond
)

// EachRecord adapts a handler of one record at a time to Run.
func EachRecord(handle func(Message) error) func([]Message) error {
	return func(batch []Message) error {
		for _, m := range batch {
			if err := handle(m); err != nil {
				return err
			}
		}
		return nil
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// progressed records that partition p handed on the record before next, stamped at;
// hwm is the partition's high watermark in that fetch: its leader answered.
func (r *Reader) progressed(p int, st *partition, next, hwm int64, at time.Time) {
	st.next.Store(next)
	if hwm > st.end.Load() {
		st.end.Store(hwm)
	}
	if next >= st.end.Load() {
		st.caughtUpAt.Store(r.now().UnixNano())
	}
	if !at.IsZero() {
		st.lastRecord.Store(at.UnixNano())
	}
	st.endKnown.Store(true)
	st.failingSince.Store(0)
	st.askedSince.Store(0)
	st.behindSince.Store(0)
	st.lastErr.Store(nil)
	if st.stalled.CompareAndSwap(true, false) {
		r.log.Info("group records readable again", "topic", r.cfg.Topic, "partition", p, "offset", next)
	}
}

// askTimeout is the deadline of each Metadata and ListOffsets request: StallAfter/2,
// 1 s to 10 s, so that a leader that does not answer is known before StallAfter.
func (r *Reader) askTimeout() time.Duration {
	return min(max(r.cfg.StallAfter/2, time.Second), 10*time.Second)
}

// refresh asks every partition's leader for its end offset, and the cluster for its
// brokers, every RefreshInterval until ctx ends: the end offsets make Lag grow while a
// partition cannot be read, an unanswered request makes the partition's lag unknown
// and, after StallAfter, the partition stalled; the brokers let the fetches find
// leaders without the configured ones. It also logs each partition that becomes
// stalled.
func (r *Reader) refresh(ctx context.Context, transport *kafka.Transport, parts []partition) {
	t := time.NewTicker(r.cfg.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A partition whose leader does not answer is dated from the start of the
		// first unanswered round, so that the request's deadline adds nothing.
		asked := r.now().UnixNano()
		leaders := make([]Broker, len(parts))
		for i := range parts {
			if b := parts[i].leader.Load(); b != nil {
				leaders[i] = *b
			}
		}
		answers, err := r.tryEndOffsets(ctx, transport, leaders)
		if ctx.Err() != nil {
			return
		}
		if len(answers) != len(parts) { // no metadata, or the partition count changed
			if err == nil {
				err = fmt.Errorf("metadata of %s: %d partitions, %d before", r.cfg.Topic, len(answers), len(parts))
			}
			answers = make([]endAnswer, len(parts))
			for i := range answers {
				answers[i] = endAnswer{end: -1, leader: leaders[i], err: err}
			}
		}
		now := r.now().UnixNano()
		for i, a := range answers {
			p := &parts[i]
			if a.leader.Addr != "" {
				p.leader.Store(&a.leader)
			}
			if a.err != nil {
				p.askedSince.CompareAndSwap(0, asked)
				p.endKnown.Store(false)
				p.askErr.Store(&a.err)
				continue
			}
			grew := a.end > p.end.Load()
			if grew { // never lowered: the fetches may know more
				p.end.Store(a.end)
			}
			p.endKnown.Store(true)
			p.askedSince.Store(0)
			p.askErr.Store(nil)
			// Behind without progress counts from a round where records were written
			// and not read: an end offset that stays above the last record
			// (compaction removed a quiet partition's last records) is no stall.
			switch {
			case p.end.Load() <= p.next.Load():
				p.behindSince.Store(0)
				p.caughtUpAt.Store(now)
			case grew:
				p.behindSince.CompareAndSwap(0, now)
			}
		}
		if err != nil {
			r.log.Debug("refreshing group record end offsets", "topic", r.cfg.Topic, "error", err)
		}
		stalled := make([]bool, len(parts))
		for _, s := range r.stalls(r.now()) {
			stalled[s.Partition] = true
			if parts[s.Partition].stalled.CompareAndSwap(false, true) {
				r.log.Error("group records partition stalled", "topic", r.cfg.Topic, "partition", s.Partition,
					"cause", s.Cause.String(), "leader", s.Leader.ID, "leader_addr", s.Leader.Addr,
					"lag", s.Lag, "since", s.Since, "error", s.Err)
			}
		}
		for i := range parts {
			if !stalled[i] && parts[i].stalled.CompareAndSwap(true, false) {
				r.log.Info("group records readable again", "topic", r.cfg.Topic, "partition", i, "offset", parts[i].next.Load())
			}
		}
	}
}

func (r *Reader) markCaughtUp() { r.once.Do(func() { close(r.caughtUp) }) }

// endOffsets returns, per partition, the end offset (next offset to be written) now,
// and its leader. It waits for the topic to exist: it is created when the first group
// appears.
func (r *Reader) endOffsets(ctx context.Context, transport *kafka.Transport) ([]endAnswer, error) {
	backoff := 250 * time.Millisecond
	for {
		answers, err := r.tryEndOffsets(ctx, transport, nil)
		if err == nil {
			r.listErr.Store(nil)
			return answers, nil
		}
		// Caught-up needs every partition's end offset: retry until all answer.
		r.listErr.Store(&err)
		if errors.Is(err, kafka.UnknownTopicOrPartition) {
			// No group was ever created: nothing to catch up with; wait for the topic.
			r.markCaughtUp()
			r.log.Debug("no group records yet; waiting for the topic", "topic", r.cfg.Topic)
			backoff = min(backoff, time.Second)
		} else {
			r.log.Warn("listing group record partitions", "topic", r.cfg.Topic, "error", err, "retry_in", backoff)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

// transport carries the Dialer's settings for Metadata and ListOffsets: TLS, SASL,
// client id and connect timeout (0 keeps kafka-go's default).
func (r *Reader) transport() *kafka.Transport {
	return &kafka.Transport{
		TLS:         r.cfg.Dialer.TLS,
		SASL:        r.cfg.Dialer.SASLMechanism,
		ClientID:    r.cfg.Dialer.ClientID,
		DialTimeout: r.cfg.Dialer.Timeout,
	}
}

// endAnswer is one partition's end offset and leader; err is why its leader did not
// tell the end offset (end is then -1).
type endAnswer struct {
	end    int64
	leader Broker
	err    error
}

// tryEndOffsets asks any reachable broker (the configured ones, then those the last
// metadata listed) for the partitions of the topic and each leader for their end
// offsets, every request with a deadline of askTimeout. When the metadata cannot be
// read and leaders is not nil (the leaders known before, per partition), the leaders
// are asked all the same: a bootstrap broker that does not answer must not hide the
// partitions whose leader does. The brokers of the answer become bootstrap servers of
// later calls and of the metadata the fetches are routed by. The error joins every
// partition's.
func (r *Reader) tryEndOffsets(ctx context.Context, transport *kafka.Transport, leaders []Broker) ([]endAnswer, error) {
	client := &kafka.Client{Addr: kafka.TCP(*r.brokers.Load()...), Timeout: r.askTimeout(), Transport: transport}
	answers, mdErr := r.metadata(ctx, client)
	if mdErr != nil {
		if len(leaders) == 0 {
			return nil, mdErr
		}
		answers = make([]endAnswer, len(leaders))
		for i, b := range leaders {
			answers[i] = endAnswer{end: -1, leader: b}
			if b.Addr == "" {
				answers[i].err = mdErr
			}
		}
	}
	n := len(answers)
	byLeader := map[string][]kafka.OffsetRequest{}
	for i, a := range answers {
		if a.err == nil {
			byLeader[a.leader.Addr] = append(byLeader[a.leader.Addr], kafka.LastOffsetOf(i))
		}
	}
	// kafka-go's Transport routes ListOffsets by its cached cluster layout, which
	// leaves out internal topics such as __consumer_offsets: the request would go to
	// whichever bootstrap broker the connection reached and fail with
	// NOT_LEADER_OR_FOLLOWER for every partition led by another broker. So each
	// leader is asked, at its own address, for the partitions it leads, all at once so
	// that one leader that does not answer delays no other.
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		bad error // an answer naming a partition that does not exist
	)
	for addr, req := range byLeader {
		wg.Go(func() {
			res, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{
				Addr:           kafka.TCP(addr),
				Topics:         map[string][]kafka.OffsetRequest{r.cfg.Topic: req},
				IsolationLevel: kafka.ReadCommitted,
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				err = fmt.Errorf("end offsets from %s: %w", addr, err)
				for _, o := range req {
					answers[o.Partition].err = err
				}
				return
			}
			got := map[int]bool{}
			for _, po := range res.Topics[r.cfg.Topic] {
				switch {
				case po.Partition < 0 || po.Partition >= n:
					bad = fmt.Errorf("end offsets from %s: partition %d of %d", addr, po.Partition, n)
				case po.Error != nil:
					answers[po.Partition].err = fmt.Errorf("partition %d: %w", po.Partition, po.Error)
				default:
					answers[po.Partition].end = po.LastOffset
				}
				got[po.Partition] = true
			}
			for _, o := range req {
				if !got[o.Partition] {
					answers[o.Partition].err = fmt.Errorf("end offsets from %s: partition %d not in the answer", addr, o.Partition)
				}
			}
		})
	}
	wg.Wait()
	if bad != nil {
		return nil, bad
	}
	errs := []error{mdErr}
	for _, a := range answers {
		errs = append(errs, a.err)
	}
	return answers, errors.Join(errs...)
}

// metadata reads the topic's partitions and their leaders (end -1 each; err set for a
// partition without one) and makes the listed brokers bootstrap servers.
func (r *Reader) metadata(ctx context.Context, client *kafka.Client) ([]endAnswer, error) {
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{r.cfg.Topic}})
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w (%w)", ErrNotBroker, err)
		}
		return nil, fmt.Errorf("metadata of %s from %s: %w", r.cfg.Topic, client.Addr, err)
	}
	brokers := slices.Clone(r.cfg.Brokers)
	for _, b := range md.Brokers {
		if addr := net.JoinHostPort(b.Host, strconv.Itoa(b.Port)); b.Host != "" && !slices.Contains(brokers, addr) {
			brokers = append(brokers, addr)
		}
	}
	r.brokers.Store(&brokers)
	if len(md.Topics) != 1 {
		return nil, fmt.Errorf("metadata of %s: %d topics in the answer", r.cfg.Topic, len(md.Topics))
	}
	if err := md.Topics[0].Error; err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", r.cfg.Topic, err)
	}
	n := len(md.Topics[0].Partitions)
	answers := make([]endAnswer, n)
	for i := range answers {
		answers[i] = endAnswer{end: -1, err: fmt.Errorf("partition %d: not in the metadata", i)}
	}
	for _, p := range md.Topics[0].Partitions {
		if p.ID < 0 || p.ID >= n {
			return nil, fmt.Errorf("metadata of %s: partition %d of %d", r.cfg.Topic, p.ID, n)
		}
		a := endAnswer{end: -1}
		if p.Leader.Host != "" {
			a.leader = Broker{ID: p.Leader.ID, Addr: net.JoinHostPort(p.Leader.Host, strconv.Itoa(p.Leader.Port))}
		}
		switch {
		case p.Error != nil:
			a.err = fmt.Errorf("partition %d: %w", p.ID, p.Error)
		case a.leader.Addr == "":
			a.err = fmt.Errorf("partition %d: %w", p.ID, kafka.LeaderNotAvailable)
		}
		answers[p.ID] = a
	}
	return answers, nil
}
