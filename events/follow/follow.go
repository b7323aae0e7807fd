package follow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/kraftwatch/kraftwatch/events"
)

// apiTimeout bounds each JetStream API request of Run.
const apiTimeout = 10 * time.Second

// Config configures Run.
type Config struct {
	// ClusterID is the Kafka cluster whose events to follow; required. Each cluster has
	// its own stream.
	ClusterID string
	// Prefix is kraftwatch's subject prefix; default "kraftwatch".
	Prefix string
	// Durable is the name of the durable JetStream consumer; required. The consumer keeps
	// the position of the last event acknowledged, so a subscriber restarted with the same
	// name resumes after it: no event is skipped. Subscribers that must each see every
	// event use different names; processes sharing a name share the work (each event goes
	// to one of them, and order across them is not kept).
	Durable string
	// Stream is the stream to read; default: the one of the cluster's streams that has
	// the durable consumer already, else FindStream's (kraftwatch's own stream, or the
	// events stream when there is none).
	Stream string
	// FilterSubjects narrows the events, e.g. Subject(prefix, cluster, ConsumerGroup,
	// "orders") for one group; default "<prefix>.<cluster token>.>". Changing it on an
	// existing durable consumer updates the consumer.
	FilterSubjects []string
	// DeliverNew makes a new durable consumer start with the events stored after it is
	// created; by default it starts with the first stored event. An existing consumer
	// resumes where it was whatever this says.
	DeliverNew bool
	// AckWait is how long an event may be handled before the server delivers it again;
	// default 30s. A handler that may take longer should call Delivery.InProgress.
	AckWait time.Duration
	// RetryDelay is how long after a handler error the handler is called again with the
	// same event, and the wait between attempts to reach the stream; default 1s.
	RetryDelay time.Duration
	// InactiveThreshold removes the durable consumer after this long without a
	// subscriber; 0 keeps it forever (the position is kept until deleted).
	InactiveThreshold time.Duration
	// Logger receives a line for each invalid message skipped and each retry; nil
	// discards them.
	Logger *slog.Logger
}

// Delivery is one event Run hands to the handler.
type Delivery struct {
	// Event is the decoded event. Its Data is nil when the type is one this package does
	// not know (Err wraps ErrUnknownType): skip it, or return an error to stop there.
	Event events.Event
	// Err is nil, or wraps ErrUnknownType.
	Err error
	// Subject is the NATS subject, "<prefix>.<cluster token>.group.<type>.<group token>".
	Subject string
	// Stream and Seq are the stream and its sequence number of the event.
	Stream string
	Seq    uint64
	// NumDelivered counts the server's deliveries of this event: more than 1 after an
	// AckWait that ran out, or a restart before the acknowledgement reached the server.
	NumDelivered uint64
	// Attempt counts the handler's calls for this delivery, from 1: more after errors.
	Attempt int

	msg jetstream.Msg
}

// InProgress tells the server that the handler is still working on the event, resetting
// AckWait.
func (d Delivery) InProgress() error { return d.msg.InProgress() }

// Run reads the events of cfg.ClusterID in stream order through a durable JetStream
// consumer (cfg.Durable) and calls handle for each, one at a time, until ctx ends; it
// then returns nil. An event is acknowledged, and the server confirms it (double ack),
// after handle returns nil; when handle returns an error it is called again with the same
// event after RetryDelay, until it succeeds or ctx ends: no later event comes first.
// A redelivery of an event this call already handled (its acknowledgement was lost, for
// example with the stream's leader) is acknowledged again and not handed on twice.
// Across calls delivery is at least once: after a crash the last event may come again
// (with NumDelivered > 1); use Event.ID (the same for the same transition) to make
// handling idempotent.
//
// Messages that are not valid kraftwatch events are logged and terminated (never
// delivered again), so one bad message does not stop the subscriber. Lost connections,
// a stream leader change or a deleted consumer are retried (the consumer is made again
// at the same position when the server still has it); Run returns an error only for
// a bad Config.
func Run(ctx context.Context, js jetstream.JetStream, cfg Config, handle func(context.Context, Delivery) error) error {
	if cfg.ClusterID == "" || cfg.Durable == "" {
		return fmt.Errorf("follow: Run needs a ClusterID and a Durable name")
	}
	cfg.Prefix = cmp.Or(cfg.Prefix, events.DefaultPrefix)
	if !events.ValidPrefix(cfg.Prefix) {
		return fmt.Errorf("follow: Run: bad prefix %q", cfg.Prefix)
	}
	root := cfg.Prefix + "." + events.EscapeToken(cfg.ClusterID)
	if len(cfg.FilterSubjects) == 0 {
		cfg.FilterSubjects = []string{root + ".>"}
	}
	cfg.AckWait = cmp.Or(cfg.AckWait, 30*time.Second)
	cfg.RetryDelay = cmp.Or(cfg.RetryDelay, time.Second)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	handled := map[string]uint64{} // last stream sequence handled, by stream
	for ctx.Err() == nil {
		err := follow(ctx, js, cfg, root, log, handled, handle)
		if ctx.Err() != nil {
			break
		}
		log.Warn("following kraftwatch events; retrying", "durable", cfg.Durable, "stream", cfg.Stream, "retry_in", cfg.RetryDelay, "error", err)
		select {
		case <-ctx.Done():
		case <-time.After(cfg.RetryDelay):
		}
	}
	return nil
}

// follow makes sure the consumer exists and handles its events until an error.
func follow(ctx context.Context, js jetstream.JetStream, cfg Config, root string, log *slog.Logger,
	handled map[string]uint64, handle func(context.Context, Delivery) error) error {
	// Each API call gets its own timeout: a request lost with a connection (its node
	// died) is never answered, and ctx may have a distant deadline or none.
	actx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	stream := cfg.Stream
	if stream == "" {
		var err error
		if stream, err = durableStream(actx, js, root, cfg.Durable); err != nil {
			return err
		}
	}
	cc := jetstream.ConsumerConfig{
		Durable:           cfg.Durable,
		Description:       "kraftwatch events of " + root + " for " + cfg.Durable,
		AckPolicy:         jetstream.AckExplicitPolicy,
		AckWait:           cfg.AckWait,
		MaxAckPending:     1, // one at a time: a redelivery comes before any later event
		MaxDeliver:        -1,
		FilterSubjects:    cfg.FilterSubjects,
		InactiveThreshold: cfg.InactiveThreshold,
		DeliverPolicy:     jetstream.DeliverAllPolicy,
	}
	if cfg.DeliverNew {
		cc.DeliverPolicy = jetstream.DeliverNewPolicy
	}
	cons, err := js.Consumer(actx, stream, cfg.Durable)
	switch {
	case errors.Is(err, jetstream.ErrConsumerNotFound):
		cons, err = js.CreateConsumer(actx, stream, cc)
	case err == nil:
		// Keep the consumer's position; update what may change.
		cur := cons.CachedInfo().Config
		cur.FilterSubject, cur.FilterSubjects = "", cc.FilterSubjects
		cur.AckWait, cur.InactiveThreshold = cc.AckWait, cc.InactiveThreshold
		cons, err = js.UpdateConsumer(actx, stream, cur)
	}
	cancel()
	if err != nil {
		return fmt.Errorf("consumer %s on stream %s: %w", cfg.Durable, stream, err)
	}
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		batch, err := cons.Fetch(1, jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			return err
		}
		for m := range batch.Messages() {
			handleOne(ctx, cfg, stream, log, m, handled, handle)
		}
		err = batch.Error()
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) && ctx.Err() == nil {
			return err
		}
	}
	return ctx.Err()
}

// handleOne decodes m, hands it to handle until handle returns nil (trying again after
// RetryDelay), records its sequence in handled and acknowledges it. A message at or
// below handled[stream] was handled already: it is only acknowledged again.
func handleOne(ctx context.Context, cfg Config, stream string, log *slog.Logger, m jetstream.Msg,
	handled map[string]uint64, handle func(context.Context, Delivery) error) {
	meta, err := m.Metadata()
	if err != nil {
		log.Warn("message without JetStream metadata; skipped", "subject", m.Subject(), "error", err)
		_ = m.Term()
		return
	}
	if meta.Sequence.Stream <= handled[stream] {
		log.Debug("redelivery of an event already handled; acknowledged again", "stream", stream, "seq", meta.Sequence.Stream)
		ack(ctx, cfg, stream, log, m, meta.Sequence.Stream, "")
		return
	}
	ev, err := events.Decode(m.Data())
	if err != nil && !errors.Is(err, events.ErrUnknownType) {
		log.Warn("not a kraftwatch event; skipped", "stream", stream, "seq", meta.Sequence.Stream, "subject", m.Subject(), "error", err)
		_ = m.TermWithReason("not a kraftwatch event")
		return
	}
	d := Delivery{Event: ev, Err: err, Subject: m.Subject(), Stream: stream, Seq: meta.Sequence.Stream,
		NumDelivered: meta.NumDelivered, msg: m}
	for d.Attempt = 1; ; d.Attempt++ {
		herr := handle(ctx, d)
		if herr == nil {
			break
		}
		log.Info("handler failed; trying again", "stream", stream, "seq", d.Seq, "id", ev.ID, "attempt", d.Attempt,
			"retry_in", cfg.RetryDelay, "error", herr)
		_ = m.InProgress() // keep the event: no other subscriber of the durable gets it meanwhile
		select {
		case <-ctx.Done():
			return // not acknowledged: delivered again after a restart
		case <-time.After(cfg.RetryDelay):
		}
	}
	handled[stream] = d.Seq
	ack(ctx, cfg, stream, log, m, d.Seq, ev.ID)
}

// ack acknowledges m and waits for the server to confirm it (double ack); a failure
// is logged: the server may deliver the event again.
func ack(ctx context.Context, cfg Config, stream string, log *slog.Logger, m jetstream.Msg, seq uint64, id string) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.AckWait)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil {
		log.Warn("acknowledgement not confirmed; the event may come again", "stream", stream, "seq", seq, "id", id, "error", err)
	}
}

// durableStream returns the stream to read root's events from: the one of the cluster's
// streams (kraftwatch's own, then the events stream) that already has the durable
// consumer, so a subscriber keeps its position; else the one FindStream returns.
func durableStream(ctx context.Context, js jetstream.JetStream, root, durable string) (string, error) {
	var found []string
	for _, subject := range []string{events.InternalPrefix + "." + root + ".>", root + ".>"} {
		name, err := js.StreamNameBySubject(ctx, subject)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		} else if err != nil {
			return "", fmt.Errorf("finding the stream of %s: %w", root, err)
		}
		found = append(found, name)
		if _, err := js.Consumer(ctx, name, durable); err == nil {
			return name, nil
		} else if !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return "", fmt.Errorf("consumer %s on stream %s: %w", durable, name, err)
		}
	}
	if len(found) == 0 {
		return "", fmt.Errorf("finding the stream of %s: %w", root, jetstream.ErrStreamNotFound)
	}
	return found[0], nil
}

// FindStream returns the stream to read a cluster's events from: kraftwatch's own stream
// (the one capturing the internal subjects "_kraftwatch.<prefix>.<cluster token>.>",
// which stores the events under their public subjects), else the one capturing the public
// subjects "<prefix>.<cluster token>.>" (the events stream, or a stream of an older
// kraftwatch). kraftwatch's own stream comes first because the events stream copies it
// by sourcing, which nats-server resumes only after a retry backoff when the leader of
// kraftwatch's stream changes (tens of seconds in a 3-node cluster); both hold the same
// events in the same order.
func FindStream(ctx context.Context, js jetstream.JetStream, prefix, clusterID string) (string, error) {
	root := cmp.Or(prefix, events.DefaultPrefix) + "." + events.EscapeToken(clusterID)
	name, err := js.StreamNameBySubject(ctx, events.InternalPrefix+"."+root+".>")
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		name, err = js.StreamNameBySubject(ctx, root+".>")
	}
	if err != nil {
		return "", fmt.Errorf("finding the stream of %s: %w", root, err)
	}
	return name, nil
}
