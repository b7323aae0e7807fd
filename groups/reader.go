package groups

import (
	"context"
	"errors"
	"fmt"
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
	// from, are read again (default DefaultRefreshInterval).
	RefreshInterval time.Duration
}

// Defaults of ReaderConfig.
const (
	DefaultStallAfter      = 30 * time.Second
	DefaultRefreshInterval = 10 * time.Second
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
// then follows it, without a consumer group (it commits nothing). kafka-go's partition
// readers retry through broker restarts and leader moves; transactional records are
// read committed. Run's handler is called from one goroutine at a time, in offset order
// within a partition.
//
// Partition readers bootstrap from the configured brokers and from every broker the
// cluster's metadata listed (refreshed every RefreshInterval), so losing the bootstrap
// broker does not stop a partition whose leader moved elsewhere. The same refresh reads
// the end offsets, so Lag grows while a partition cannot be read. Health reports a
// partition stalled when it stayed unreadable, or behind without progress, for
// StallAfter. Records, Retries, Lag and Health are safe to call from any goroutine.
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

// partition is what the Reader knows of one partition's progress. Times are unix
// nanoseconds; zero means never or not now.
type partition struct {
	next         atomic.Int64 // next offset to hand on
	end          atomic.Int64 // highest end offset known (fetch high watermark or ListOffsets)
	failingSince atomic.Int64 // when the current run of read errors began
	stalled      atomic.Bool  // reported stalled (for the recovery log line)
	lastErr      atomic.Pointer[error]
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
		cfg.RefreshInterval = DefaultRefreshInterval
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

// Records is the number of records handed to the handler so far.
func (r *Reader) Records() int64 { return r.records.Load() }

// Retries is the number of times a partition reader was rebuilt after an error.
func (r *Reader) Retries() int64 { return r.retries.Load() }

// Lag is the number of records behind the partitions' end offsets: the highest end
// offset known of each partition (from its fetches, or read every RefreshInterval
// while it cannot be fetched) minus the next offset to read.
func (r *Reader) Lag() int64 {
	parts := r.parts.Load()
	if parts == nil {
		return 0
	}
	var total int64
	for i := range *parts {
		p := &(*parts)[i]
		total += max(0, p.end.Load()-p.next.Load())
	}
	return total
}

// Stall is a partition Health reports: unreadable since Since; Err is the last read
// error.
type Stall struct {
	Partition int
	Since     time.Time
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
		fmt.Fprintf(&b, "partition %d stalled for %v, %d records behind", s.Partition, e.For.Round(time.Second), s.Lag)
		if s.Err != nil {
			fmt.Fprintf(&b, ": %v", s.Err)
		}
	}
	return fmt.Sprintf("%s: %s", e.Topic, b.String())
}

// Health is nil while every partition is read, else a *StallError naming the partitions
// whose reads have failed without a success for longer than StallAfter (or that the
// partitions could not be listed for that long). A partition that is merely quiet is
// healthy: compaction can leave its end offset above its last record for good.
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
	return &StallError{Topic: r.cfg.Topic, Partitions: stalls, For: longest}
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
		if since, ok := p.stalledSince(now, r.cfg.StallAfter); ok {
			s := Stall{Partition: i, Since: since, Lag: max(0, p.end.Load()-p.next.Load())}
			if errp := p.lastErr.Load(); errp != nil {
				s.Err = *errp
			}
			out = append(out, s)
		}
	}
	return out
}

// stalledSince reports whether the partition's reads have failed for longer than
// bound, and since when.
func (p *partition) stalledSince(now time.Time, bound time.Duration) (time.Time, bool) {
	if f := p.failingSince.Load(); f != 0 && now.Sub(time.Unix(0, f)) > bound {
		return time.Unix(0, f), true
	}
	return time.Time{}, false
}

// Run reads until ctx ends or handle returns an error.
func (r *Reader) Run(ctx context.Context, handle func(Message) error) error {
	r.started.Store(r.now().UnixNano())
	transport := r.transport()
	defer transport.CloseIdleConnections()
	ends, err := r.endOffsets(ctx, transport)
	if err != nil {
		return err
	}
	r.log.Info("reading group records", "topic", r.cfg.Topic, "partitions", len(ends))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	parts := make([]partition, len(ends))
	for i, end := range ends {
		parts[i].end.Store(end)
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
	for p, end := range ends {
		wg.Go(func() {
			err := r.readPartition(ctx, p, &parts[p], func(m Message) error {
				mu.Lock()
				defer mu.Unlock()
				if err := handle(m); err != nil {
					return err
				}
				r.records.Add(1)
				// >=: compaction may have removed the record at end-1 (kafka-go hands
				// on control and aborted records too, so nothing else hides it).
				if m.Offset+1 >= end && !caught[p] {
					caught[p] = true
					if pending--; pending == 0 {
						r.log.Info("group records caught up", "topic", r.cfg.Topic, "records", r.records.Load())
						r.markCaughtUp()
					}
				}
				return nil
			})
			if err != nil {
				cancel(err)
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// readPartition follows one partition from its earliest offset. kafka-go retries
// broker and leader errors itself; when it gives up, the partition reader is rebuilt at
// the next offset after a backoff, so a broker restart never loses or repeats a record.
func (r *Reader) readPartition(ctx context.Context, p int, st *partition, handle func(Message) error) error {
	next := kafka.FirstOffset
	backoff := 250 * time.Millisecond
	for ctx.Err() == nil {
		kr := kafka.NewReader(kafka.ReaderConfig{
			Brokers:        *r.brokers.Load(),
			Dialer:         r.cfg.Dialer,
			Topic:          r.cfg.Topic,
			Partition:      p,
			MinBytes:       1,
			MaxBytes:       8 << 20,
			MaxWait:        250 * time.Millisecond,
			IsolationLevel: kafka.ReadCommitted,
			ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
				r.log.Debug("kafka reader: "+fmt.Sprintf(msg, args...), "partition", p)
			}),
		})
		if err := kr.SetOffset(next); err != nil {
			kr.Close()
			return err
		}
		for {
			m, err := kr.FetchMessage(ctx)
			if err != nil {
				kr.Close()
				if ctx.Err() != nil {
					return nil
				}
				r.retries.Add(1)
				st.lastErr.Store(&err)
				st.failingSince.CompareAndSwap(0, r.now().UnixNano())
				r.log.Warn("reading group records failed; retrying", "topic", r.cfg.Topic, "partition", p,
					"offset", next, "error", err, "retry_in", backoff)
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 10*time.Second)
				break
			}
			backoff = 250 * time.Millisecond
			if err := handle(Message{Partition: p, Offset: m.Offset, Key: m.Key, Value: m.Value, Time: m.Time}); err != nil {
				kr.Close()
				return err
			}
			next = m.Offset + 1
			r.progressed(p, st, next, m.HighWaterMark)
		}
	}
	return nil
}

// progressed records that partition p handed on the record before next; hwm is the
// partition's high watermark in that fetch.
func (r *Reader) progressed(p int, st *partition, next, hwm int64) {
	st.next.Store(next)
	if hwm > st.end.Load() {
		st.end.Store(hwm)
	}
	st.failingSince.Store(0)
	st.lastErr.Store(nil)
	if st.stalled.CompareAndSwap(true, false) {
		r.log.Info("group records readable again", "topic", r.cfg.Topic, "partition", p, "offset", next)
	}
}

// refresh reads the end offsets of every partition and the cluster's brokers every
// RefreshInterval until ctx ends: the end offsets make Lag grow while a partition
// cannot be read, the brokers let partition readers bootstrap without the configured
// ones. It also logs each partition that becomes stalled.
func (r *Reader) refresh(ctx context.Context, transport *kafka.Transport, parts []partition) {
	t := time.NewTicker(r.cfg.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ends, err := r.tryEndOffsets(ctx, transport)
		if len(ends) == len(parts) {
			for i, end := range ends { // -1 (not known now) never raises end
				if end > parts[i].end.Load() {
					parts[i].end.Store(end)
				}
			}
		}
		if err != nil {
			r.log.Debug("refreshing group record end offsets", "topic", r.cfg.Topic, "error", err)
		}
		for _, s := range r.stalls(r.now()) {
			if parts[s.Partition].stalled.CompareAndSwap(false, true) {
				r.log.Error("group records partition stalled", "topic", r.cfg.Topic, "partition", s.Partition,
					"lag", s.Lag, "since", s.Since, "error", s.Err)
			}
		}
	}
}

func (r *Reader) markCaughtUp() { r.once.Do(func() { close(r.caughtUp) }) }

// endOffsets returns, per partition, the end offset (next offset to be written) now.
// It waits for the topic to exist: it is created when the first group appears.
func (r *Reader) endOffsets(ctx context.Context, transport *kafka.Transport) ([]int64, error) {
	backoff := 250 * time.Millisecond
	for {
		ends, err := r.tryEndOffsets(ctx, transport)
		if err == nil {
			r.listErr.Store(nil)
			return ends, nil
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

// transport carries the Dialer's settings the partition readers use: TLS, SASL,
// client id and connect timeout (0 keeps kafka-go's default).
func (r *Reader) transport() *kafka.Transport {
	return &kafka.Transport{
		TLS:         r.cfg.Dialer.TLS,
		SASL:        r.cfg.Dialer.SASLMechanism,
		ClientID:    r.cfg.Dialer.ClientID,
		DialTimeout: r.cfg.Dialer.Timeout,
	}
}

// tryEndOffsets asks any reachable broker (the configured ones, then those the last
// metadata listed) for the partitions of the topic and each leader for their end
// offsets. The brokers of the answer become bootstrap servers of later calls and of
// the partition readers built after it.
func (r *Reader) tryEndOffsets(ctx context.Context, transport *kafka.Transport) ([]int64, error) {
	client := &kafka.Client{Addr: kafka.TCP(*r.brokers.Load()...), Timeout: 10 * time.Second, Transport: transport}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{r.cfg.Topic}})
	if err != nil {
		return nil, err
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
	// kafka-go's Transport routes ListOffsets by its cached cluster layout, which
	// leaves out internal topics such as __consumer_offsets: the request would go to
	// whichever bootstrap broker the connection reached and fail with
	// NOT_LEADER_OR_FOLLOWER for every partition led by another broker. So each
	// leader is asked, at its own address, for the partitions it leads.
	// A partition that cannot answer (no leader, its leader unreachable) has end -1
	// and an error in the joined error; the others are still returned.
	n := len(md.Topics[0].Partitions)
	ends := make([]int64, n)
	for i := range ends {
		ends[i] = -1
	}
	var errs []error
	byLeader := map[string][]kafka.OffsetRequest{}
	for _, p := range md.Topics[0].Partitions {
		switch {
		case p.ID < 0 || p.ID >= n:
			return nil, fmt.Errorf("metadata of %s: partition %d of %d", r.cfg.Topic, p.ID, n)
		case p.Error != nil:
			errs = append(errs, fmt.Errorf("partition %d: %w", p.ID, p.Error))
		case p.Leader.Host == "":
			errs = append(errs, fmt.Errorf("partition %d: %w", p.ID, kafka.LeaderNotAvailable))
		default:
			addr := net.JoinHostPort(p.Leader.Host, strconv.Itoa(p.Leader.Port))
			byLeader[addr] = append(byLeader[addr], kafka.LastOffsetOf(p.ID))
		}
	}
	for addr, req := range byLeader {
		res, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{
			Addr:           kafka.TCP(addr),
			Topics:         map[string][]kafka.OffsetRequest{r.cfg.Topic: req},
			IsolationLevel: kafka.ReadCommitted,
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("end offsets from %s: %w", addr, err))
			continue
		}
		for _, po := range res.Topics[r.cfg.Topic] {
			switch {
			case po.Partition < 0 || po.Partition >= n:
				return nil, fmt.Errorf("end offsets from %s: partition %d of %d", addr, po.Partition, n)
			case po.Error != nil:
				errs = append(errs, fmt.Errorf("partition %d: %w", po.Partition, po.Error))
			default:
				ends[po.Partition] = po.LastOffset
			}
		}
	}
	if slices.Contains(ends, -1) && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("end offsets of %s: not every partition answered", r.cfg.Topic))
	}
	return ends, errors.Join(errs...)
}
