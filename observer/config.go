package observer

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults for Config.
const (
	DefaultPollInterval = 100 * time.Millisecond
	DefaultMinBackoff   = 100 * time.Millisecond
	DefaultMaxBackoff   = 10 * time.Second
	DefaultFetchMaxWait = 500 * time.Millisecond
	// DefaultRequestTimeout is Kafka's controller.quorum.request.timeout.ms (2000 ms,
	// QuorumConfig): a leader that does not answer a Fetch within FetchMaxWait plus
	// this is left for another controller, as Kafka's observers leave it.
	DefaultRequestTimeout = 2 * time.Second
	// DefaultMaxUncommitted bounds the fetched records waiting for the high watermark:
	// four of Kafka's largest Fetch answers (8 MiB each).
	DefaultMaxUncommitted = 32 << 20
)

// Config configures an Observer. Exactly one of Dir (the disk source) and Controllers
// (the network source) is set.
type Config struct {
	// Dir is the metadata log directory: <metadata.log.dir>/__cluster_metadata-0.
	Dir string

	// Controllers are host:port of KRaft controller listeners (Kafka's
	// controller.quorum.bootstrap.servers): the observer fetches __cluster_metadata-0
	// from the quorum leader, as a Raft observer (replica id -1), instead of reading
	// Dir. It needs ClusterAction on the cluster.
	Controllers []string
	// ClientOpts are franz-go client options for the connections to the controllers:
	// TLS (kgo.DialTLSConfig), SASL (kgo.SASL), a dialer. The observer sets the seed
	// broker, client id and timeouts itself.
	ClientOpts []kgo.Opt
	// Principal is the principal the observer authenticates as, named in the ACL an
	// authorization failure asks for; empty means User:ANONYMOUS.
	Principal string
	// ClusterID, when set, is sent with every Fetch, so that controllers of another
	// cluster refuse to serve it (INCONSISTENT_CLUSTER_ID).
	ClusterID string
	// FetchMaxWait is how long the leader may hold a Fetch that has nothing new (the
	// long poll). 0 means DefaultFetchMaxWait.
	FetchMaxWait time.Duration
	// RequestTimeout bounds each request to a controller beyond FetchMaxWait: dialing,
	// TLS, SASL and reading the response. A controller that does not answer in time
	// is left: the next request goes to another controller, which names the leader
	// (Kafka's observers do the same, KafkaRaftClient.pollFollowerAsObserver). 0 means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// MaxUncommitted bounds the bytes of fetched batches kept past the high watermark,
	// waiting for the quorum to commit them (one batch is always kept, whatever its
	// size). When it is reached the observer takes no more records: it asks the
	// leader only for its high watermark, every FetchMaxWait, dropping the records
	// of those answers, until the high watermark moves and room is made. 0 means
	// DefaultMaxUncommitted.
	MaxUncommitted int64
	// Logger receives the observer's logs; nil discards them.
	Logger *slog.Logger
	// Handler, when set, is called on Run's goroutine for every update, in log order.
	// It must not block for long: the observer reads nothing while it runs.
	Handler func(Update)
	// PollInterval is the period of the polling timer that backs up file
	// notifications (and replaces them when they are unavailable). 0 means
	// DefaultPollInterval.
	PollInterval time.Duration
	// MinBackoff and MaxBackoff bound the wait before retrying after an error (it
	// doubles from one to the other). 0 means the defaults.
	MinBackoff, MaxBackoff time.Duration
	// NoNotify disables file notifications: the observer only polls. For file systems
	// without inotify, and for tests that control time.
	NoNotify bool
	// Metrics receives the counters; nil means new ones (see Observer.Metrics).
	Metrics *Metrics
	// LoadGC lets a one-pass load of a clean snapshot raise the process's GC percent
	// (debug.SetGCPercent) to 400 while it runs, unless it is off or higher, and set
	// it back when it ends: nearly all that a load allocates is the image it keeps, so
	// collecting during it mostly marks that image again (BenchmarkLoadSnapshot in
	// observer/bench_test.go and bench/metadata.sh measure it). It
	// changes a setting of the whole process, so it is a program's choice, not a
	// library's: kraftwatch sets it unless GOGC or GOMEMLIMIT is set.
	LoadGC bool
}

// Validate reports what is wrong with the config, one error per bad value.
func (c *Config) Validate() error {
	var errs []error
	switch {
	case c.Dir == "" && len(c.Controllers) == 0:
		errs = append(errs, errors.New("observer: neither Dir nor Controllers is set"))
	case c.Dir != "" && len(c.Controllers) > 0:
		errs = append(errs, errors.New("observer: both Dir and Controllers are set"))
	}
	for _, addr := range c.Controllers {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("observer: controller %q is not host:port", addr))
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"PollInterval", c.PollInterval}, {"MinBackoff", c.MinBackoff}, {"MaxBackoff", c.MaxBackoff},
		{"FetchMaxWait", c.FetchMaxWait}, {"RequestTimeout", c.RequestTimeout}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("observer: %s is negative (%v)", d.name, d.v))
		}
	}
	if c.MaxUncommitted < 0 {
		errs = append(errs, fmt.Errorf("observer: MaxUncommitted is negative (%d)", c.MaxUncommitted))
	}
	if c.MinBackoff > 0 && c.MaxBackoff > 0 && c.MinBackoff > c.MaxBackoff {
		errs = append(errs, fmt.Errorf("observer: MinBackoff %v is above MaxBackoff %v", c.MinBackoff, c.MaxBackoff))
	}
	return errors.Join(errs...)
}

func (c *Config) withDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.PollInterval == 0 {
		c.PollInterval = DefaultPollInterval
	}
	// Each bound left zero takes its default, kept on the right side of the other bound:
	// a zero MaxBackoff must not make MinBackoff tiny (that retried every nanosecond).
	switch {
	case c.MinBackoff == 0 && c.MaxBackoff == 0:
		c.MinBackoff, c.MaxBackoff = DefaultMinBackoff, DefaultMaxBackoff
	case c.MinBackoff == 0:
		c.MinBackoff = min(DefaultMinBackoff, c.MaxBackoff)
	case c.MaxBackoff == 0:
		c.MaxBackoff = max(DefaultMaxBackoff, c.MinBackoff)
	}
	if c.FetchMaxWait == 0 {
		c.FetchMaxWait = DefaultFetchMaxWait
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.MaxUncommitted == 0 {
		c.MaxUncommitted = DefaultMaxUncommitted
	}
	if c.Principal == "" {
		c.Principal = "User:ANONYMOUS"
	}
	if c.Metrics == nil {
		c.Metrics = newMetrics()
	}
}
