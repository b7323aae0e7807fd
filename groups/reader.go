package groups

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
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
}

// Validate reports the first missing or bad setting.
func (c ReaderConfig) Validate() error {
	if len(splitBrokers(c.Brokers)) == 0 {
		return errors.New("groups: no bootstrap servers")
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
type Reader struct {
	cfg      ReaderConfig
	log      *slog.Logger
	caughtUp chan struct{}
	once     sync.Once
	lags     atomic.Pointer[[]atomic.Int64] // per partition, set by Run
	records  atomic.Int64
	retries  atomic.Int64
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
	return &Reader{cfg: cfg, log: cfg.Logger, caughtUp: make(chan struct{})}, nil
}

// CaughtUp is closed once every partition has been read up to the end offset it had
// when Run started, or as soon as Run finds that the topic does not exist yet (Kafka
// creates it with the first group, so there is nothing to catch up with).
func (r *Reader) CaughtUp() <-chan struct{} { return r.caughtUp }

// Records is the number of records handed to the handler so far.
func (r *Reader) Records() int64 { return r.records.Load() }

// Retries is the number of times a partition reader was rebuilt after an error.
func (r *Reader) Retries() int64 { return r.retries.Load() }

// Lag is the number of records behind the partitions' end offsets, as last reported by
// the partition readers.
func (r *Reader) Lag() int64 {
	lags := r.lags.Load()
	if lags == nil {
		return 0
	}
	var total int64
	for i := range *lags {
		total += (*lags)[i].Load()
	}
	return total
}

// Run reads until ctx ends or handle returns an error.
func (r *Reader) Run(ctx context.Context, handle func(Message) error) error {
	ends, err := r.endOffsets(ctx)
	if err != nil {
		return err
	}
	r.log.Info("reading group records", "topic", r.cfg.Topic, "partitions", len(ends))
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

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
	lags := make([]atomic.Int64, len(ends))
	r.lags.Store(&lags)
	var wg sync.WaitGroup
	for p, end := range ends {
		wg.Go(func() {
			err := r.readPartition(ctx, p, &lags[p], func(m Message) error {
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
func (r *Reader) readPartition(ctx context.Context, p int, lag *atomic.Int64, handle func(Message) error) error {
	next := kafka.FirstOffset
	backoff := 250 * time.Millisecond
	for ctx.Err() == nil {
		kr := kafka.NewReader(kafka.ReaderConfig{
			Brokers:        r.cfg.Brokers,
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
			lag.Store(m.HighWaterMark - m.Offset - 1)
			if err := handle(Message{Partition: p, Offset: m.Offset, Key: m.Key, Value: m.Value, Time: m.Time}); err != nil {
				kr.Close()
				return err
			}
			next = m.Offset + 1
		}
	}
	return nil
}

func (r *Reader) markCaughtUp() { r.once.Do(func() { close(r.caughtUp) }) }

// endOffsets returns, per partition, the end offset (next offset to be written) now.
// It waits for the topic to exist: it is created when the first group appears.
func (r *Reader) endOffsets(ctx context.Context) ([]int64, error) {
	// The Transport carries the Dialer's settings the partition readers use: TLS,
	// SASL, client id and connect timeout (0 keeps kafka-go's default).
	transport := &kafka.Transport{
		TLS:         r.cfg.Dialer.TLS,
		SASL:        r.cfg.Dialer.SASLMechanism,
		ClientID:    r.cfg.Dialer.ClientID,
		DialTimeout: r.cfg.Dialer.Timeout,
	}
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(r.cfg.Brokers...), Timeout: 10 * time.Second, Transport: transport}
	backoff := 250 * time.Millisecond
	for {
		ends, err := r.tryEndOffsets(ctx, client)
		if err == nil {
			return ends, nil
		}
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

func (r *Reader) tryEndOffsets(ctx context.Context, client *kafka.Client) ([]int64, error) {
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{r.cfg.Topic}})
	if err != nil {
		return nil, err
	}
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
	n := len(md.Topics[0].Partitions)
	byLeader := map[string][]kafka.OffsetRequest{}
	for _, p := range md.Topics[0].Partitions {
		if p.Error != nil {
			return nil, fmt.Errorf("partition %d: %w", p.ID, p.Error)
		}
		if p.ID < 0 || p.ID >= n {
			return nil, fmt.Errorf("metadata of %s: partition %d of %d", r.cfg.Topic, p.ID, n)
		}
		if p.Leader.Host == "" {
			return nil, fmt.Errorf("partition %d: %w", p.ID, kafka.LeaderNotAvailable)
		}
		addr := net.JoinHostPort(p.Leader.Host, strconv.Itoa(p.Leader.Port))
		byLeader[addr] = append(byLeader[addr], kafka.LastOffsetOf(p.ID))
	}
	ends := make([]int64, n)
	answered := 0
	for addr, req := range byLeader {
		res, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{
			Addr:           kafka.TCP(addr),
			Topics:         map[string][]kafka.OffsetRequest{r.cfg.Topic: req},
			IsolationLevel: kafka.ReadCommitted,
		})
		if err != nil {
			return nil, fmt.Errorf("end offsets from %s: %w", addr, err)
		}
		for _, po := range res.Topics[r.cfg.Topic] {
			if po.Error != nil {
				return nil, fmt.Errorf("partition %d: %w", po.Partition, po.Error)
			}
			if po.Partition < 0 || po.Partition >= n {
				return nil, fmt.Errorf("end offsets from %s: partition %d of %d", addr, po.Partition, n)
			}
			ends[po.Partition] = po.LastOffset
			answered++
		}
	}
	if answered != n {
		return nil, fmt.Errorf("end offsets of %s: %d of %d partitions answered", r.cfg.Topic, answered, n)
	}
	return ends, nil
}
