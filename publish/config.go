package publish

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
)

// Mode chooses how events are delivered.
type Mode uint8

const (
	// UnknownMode is the zero Mode; Config defaults it to ModeJetStream.
	UnknownMode Mode = iota
	// ModeJetStream stores events in a stream, one subject per group; the last message
	// of a subject is the durable record of the group's last announced hash.
	ModeJetStream
	// ModeCore publishes with plain core NATS: no stream, no storage, no cross-replica
	// duplicate check, and the last announced hashes are kept in memory only, so after a
	// restart LastPublished knows nothing. A publish is retried when the server did not
	// confirm it (flush), so a subscriber may see an event twice around a disconnect.
	ModeCore
)

// String returns "jetstream", "core" or "unknown".
func (m Mode) String() string {
	switch m {
	case ModeJetStream:
		return "jetstream"
	case ModeCore:
		return "core"
	}
	return "unknown"
}

// ParseMode reads "jetstream" or "core".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "jetstream":
		return ModeJetStream, nil
	case "core":
		return ModeCore, nil
	}
	return UnknownMode, fmt.Errorf("unknown mode %q (want jetstream or core)", s)
}

// Defaults for zero Config fields.
const (
	DefaultReplicas          = 1
	DefaultMaxMsgsPerSubject = 16
	DefaultDuplicateWindow   = 2 * time.Minute
	DefaultBufferSize        = 1024
	DefaultWorkers           = 1024
	DefaultPublishTimeout    = 5 * time.Second
	DefaultRetryMin          = 100 * time.Millisecond
	DefaultRetryMax          = 5 * time.Second
	DefaultDrainTimeout      = 10 * time.Second
)

// Config configures a Publisher. Zero fields take the defaults above; Validate reports
// every bad field at once.
type Config struct {
	// Conn is the NATS connection, owned by the caller (URL, credentials, TLS and
	// reconnect options are set there; reconnecting forever, nats.MaxReconnects(-1), is
	// what a sidecar wants). The Publisher never closes or drains it.
	Conn *nats.Conn
	// Mode is ModeJetStream (the default) or ModeCore.
	Mode Mode
	// Prefix is the first token(s) of every subject: tokens of A-Z a-z 0-9 - _ joined
	// by '.'. Default "kraftwatch". In ModeJetStream its first token may not be
	// InternalPrefix, whose subjects subscribers of "<prefix>.>" must not see.
	Prefix string
	// ClusterID is the Kafka cluster id; required.
	ClusterID string
	// HashScheme is "murmur3" (the default) or "kafka"; every event carries it.
	HashScheme string

	// Stream settings, used only to create the streams when they are missing (both get
	// the same Replicas, Storage and limits). An existing stream is used as it is after
	// checking that it stores and republishes this cluster's events as kraftwatch's own
	// would; a stream of the shape older versions created (capturing the public
	// subjects directly) is updated (see the package doc, "Subjects and the streams").
	//
	// The stream captures "_kraftwatch.<prefix>.<cluster token>.>" (StreamSubjects),
	// stores it as "<prefix>.<cluster token>.>" and republishes what it stores there, with
	// limits retention: work-queue and interest retention would delete the last event of
	// a group, which is the record of its last announced hash.
	Stream string // default "KRAFTWATCH_<cluster id>" (other bytes than A-Z a-z 0-9 - _ as '_')
	// EventsStream is the stream subscribers read: it captures the public subjects
	// "<prefix>.<cluster token>.>" (so clients that look a stream up by subject find it)
	// and sources Stream, whose events it holds in the same order, without the
	// Nats-Expected-* headers of kraftwatch's publishes. It is created with the same
	// settings when no stream captures the public subjects; see the package doc,
	// "Subjects and the streams". Default Stream + "_EVENTS"; must be empty when
	// NoEventsStream is set.
	EventsStream string
	// NoEventsStream runs without the events stream, for throughput: kraftwatch neither
	// creates nor needs it, and nats-server stores each event once and republishes it,
	// about half its work per event with the events stream. Subscribers read Stream
	// (its consumers filter on the public subjects; follow.Run does) or the
	// republished core subjects; a lookup of a stream by a public subject
	// (StreamNameBySubject, "nats sub --all") finds none. An events stream that exists
	// is left alone (it goes on sourcing Stream, and costs what it costs), with a
	// warning saying how to delete it. See the package doc, "Without the events stream".
	NoEventsStream bool
	// Replicas is the replica count of both streams, 1 to 5. Default 1.
	Replicas int
	// Storage is jetstream.FileStorage (the zero value) or jetstream.MemoryStorage.
	Storage jetstream.StorageType
	// MaxAge drops events older than this; 0 keeps them forever. A group whose last event
	// ages out is announced again after a restart (its last hash is then unknown), so keep
	// MaxAge well above the longest quiet period of a group or leave it 0 and bound the
	// stream with MaxMsgsPerSubject.
	MaxAge time.Duration
	// MaxMsgsPerSubject is how many events are kept per group; -1 means no limit.
	// Default 16. The last one is always kept.
	MaxMsgsPerSubject int64
	// MaxBytes bounds the stream's size; 0 or -1 means no limit. Old events go first, and
	// so can the last event of a quiet group: prefer MaxMsgsPerSubject.
	MaxBytes int64
	// DuplicateWindow is JetStream's Nats-Msg-Id window. Default 2m.
	DuplicateWindow time.Duration

	// BufferSize is how many events Enqueue may hold before it blocks. Default 1024.
	BufferSize int
	// Workers is how many events are in flight at once, each on its own subject: in
	// ModeJetStream published together, their acks awaited asynchronously, by at most
	// 16 goroutines. Default 1024.
	Workers int
	// PublishTimeout bounds one publish attempt or one read of a subject. Default 5s.
	PublishTimeout time.Duration
	// RetryMin and RetryMax bound the exponential backoff between attempts. Defaults
	// 100ms and 5s.
	RetryMin, RetryMax time.Duration
	// DrainTimeout bounds publishing what is queued after Run's context ends. Default 10s.
	DrainTimeout time.Duration
	// FailureLogEvery is how often a publisher whose attempts keep failing logs a
	// summary (attempts failed, events waiting, last error) after the first failure's
	// line; a line says when publishing recovers. Default 30s.
	FailureLogEvery time.Duration
	// ConnHealth, when set, says why Conn is not connected (the cause of its last failed
	// attempt, with the setting to check): Health and the stream's retry log lines give
	// it instead of the timeouts the publisher sees. Nil while connected.
	ConnHealth func() error

	// Logger receives log lines; nil discards them.
	Logger *slog.Logger
	// Now is the clock for events without a Time; nil means time.Now.
	Now func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Mode == UnknownMode {
		c.Mode = ModeJetStream
	}
	if c.Prefix == "" {
		c.Prefix = events.DefaultPrefix
	}
	if c.HashScheme == "" {
		c.HashScheme = events.SchemeMurmur3
	}
	if c.Stream == "" && c.ClusterID != "" {
		c.Stream = "KRAFTWATCH_" + strings.Map(func(r rune) rune {
			if r < 0x80 && safe(byte(r)) {
				return r
			}
			return '_'
		}, c.ClusterID)
	}
	if c.EventsStream == "" && c.Stream != "" && !c.NoEventsStream {
		c.EventsStream = c.Stream + "_EVENTS"
	}
	if c.Replicas == 0 {
		c.Replicas = DefaultReplicas
	}
	if c.MaxMsgsPerSubject == 0 {
		c.MaxMsgsPerSubject = DefaultMaxMsgsPerSubject
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = -1
	}
	if c.DuplicateWindow == 0 {
		c.DuplicateWindow = DefaultDuplicateWindow
	}
	if c.BufferSize == 0 {
		c.BufferSize = DefaultBufferSize
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.PublishTimeout == 0 {
		c.PublishTimeout = DefaultPublishTimeout
	}
	if c.RetryMin == 0 {
		c.RetryMin = DefaultRetryMin
	}
	if c.RetryMax == 0 {
		c.RetryMax = DefaultRetryMax
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if c.FailureLogEvery == 0 {
		c.FailureLogEvery = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports every bad field of c (after defaults), one error each, all wrapping
// ErrInvalidConfig.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	if c.Conn == nil {
		bad("Conn: no NATS connection")
	}
	if c.Mode != ModeJetStream && c.Mode != ModeCore {
		bad("Mode: %d is not jetstream or core", c.Mode)
	}
	if !events.ValidPrefix(c.Prefix) {
		bad("Prefix %q: want tokens of A-Z a-z 0-9 - _ separated by '.'", c.Prefix)
	}
	if c.ClusterID == "" {
		bad("ClusterID: empty")
	}
	if c.HashScheme != events.SchemeMurmur3 && c.HashScheme != events.SchemeKafka {
		bad("HashScheme %q: want murmur3 or kafka", c.HashScheme)
	}
	if c.Mode == ModeJetStream {
		if first, _, _ := strings.Cut(c.Prefix, "."); first == events.InternalPrefix {
			bad("Prefix %q: its first token %s is kept for the subjects kraftwatch publishes to before the stream stores them", c.Prefix, events.InternalPrefix)
		}
		if c.ClusterID != "" && c.Stream == "" || c.Stream != "" && !events.ValidPrefix(c.Stream) || strings.Contains(c.Stream, ".") {
			bad("Stream %q: want a name of A-Z a-z 0-9 - _", c.Stream)
		}
		if c.EventsStream != "" && (!events.ValidPrefix(c.EventsStream) || strings.Contains(c.EventsStream, ".")) {
			bad("EventsStream %q: want a name of A-Z a-z 0-9 - _", c.EventsStream)
		} else if c.EventsStream != "" && c.EventsStream == c.Stream {
			bad("EventsStream %q: the same name as Stream", c.EventsStream)
		} else if c.EventsStream != "" && c.NoEventsStream {
			bad("EventsStream %q: set together with NoEventsStream", c.EventsStream)
		}
		if c.Replicas < 1 || c.Replicas > 5 {
			bad("Replicas %d: want 1 to 5", c.Replicas)
		}
		if c.Storage != jetstream.FileStorage && c.Storage != jetstream.MemoryStorage {
			bad("Storage %d: want file or memory", c.Storage)
		}
		if c.MaxAge < 0 {
			bad("MaxAge %v: negative", c.MaxAge)
		}
		if c.MaxMsgsPerSubject < -1 {
			bad("MaxMsgsPerSubject %d: want -1 (no limit) or more than 0", c.MaxMsgsPerSubject)
		}
		if c.MaxBytes < -1 {
			bad("MaxBytes %d: want -1 (no limit) or more than 0", c.MaxBytes)
		}
		if c.DuplicateWindow < 0 {
			bad("DuplicateWindow %v: negative", c.DuplicateWindow)
		}
		if c.MaxAge > 0 && c.DuplicateWindow > c.MaxAge {
			bad("DuplicateWindow %v: longer than MaxAge %v", c.DuplicateWindow, c.MaxAge)
		}
	}
	if c.BufferSize < 1 {
		bad("BufferSize %d: want 1 or more", c.BufferSize)
	}
	if c.Workers < 1 {
		bad("Workers %d: want 1 or more", c.Workers)
	}
	if c.PublishTimeout < 0 {
		bad("PublishTimeout %v: negative", c.PublishTimeout)
	}
	if c.RetryMin < 0 || c.RetryMax < c.RetryMin {
		bad("RetryMin %v, RetryMax %v: want 0 <= RetryMin <= RetryMax", c.RetryMin, c.RetryMax)
	}
	if c.DrainTimeout < 0 {
		bad("DrainTimeout %v: negative", c.DrainTimeout)
	}
	return errors.Join(errs...)
}

// subjectRoot returns "<prefix>.<cluster token>".
func (c *Config) subjectRoot() string { return c.Prefix + "." + events.EscapeToken(c.ClusterID) }
