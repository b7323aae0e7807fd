package publish

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publishing into JetStream is a core NATS publish with a reply subject: the stream
// answers on it with a PubAck (or an error), and nats-server answers with a 503 status
// when nothing captures the subject. The workers do this themselves rather than through
// nats.go's jetstream.PublishMsgAsync, which costs about 18 allocations per event (a
// future, a timer, a reply subject, the JSON decoding of the ack with encoding/json):
// each worker publishes with nats.Conn.PublishMsg, reusing one message and its headers,
// on the reply subject "<inbox>.<worker>.<token>"; one subscription of "<inbox>.>"
// (Publisher.onReply) hands each answer to the worker named in its subject, which finds
// the event by its token, parses the answer (parseAck) and ends the attempt; an attempt
// not answered within Config.PublishTimeout fails with errAckTimeout (worker.expire).
// An answer that comes after that (its token is no longer in flight) is ignored: the
// retry reads the subject's last event first, so an event stored late is found there.

// errAckTimeout is an attempt that got no answer within Config.PublishTimeout.
var errAckTimeout = errors.New("no answer from JetStream within the publish timeout")

// onReply hands an answer to the worker its reply subject names.
func (p *Publisher) onReply(m *nats.Msg) {
	rest := m.Subject[min(len(p.inbox)+1, len(m.Subject)):]
	i, _, ok := strings.Cut(rest, ".")
	if !ok {
		return
	}
	n, err := strconv.Atoi(i)
	if err != nil || n < 0 || n >= len(p.shards) {
		return
	}
	select {
	case p.shards[n].acks <- m:
	case <-p.workersDone: // a late answer after Run's workers returned
	}
}

// replyToken returns the token of a reply subject "<inbox>.<worker>.<token>".
func replyToken(subject string) (uint64, bool) {
	i := len(subject) - 1
	for i >= 0 && subject[i] != '.' {
		i--
	}
	t, err := strconv.ParseUint(subject[i+1:], 10, 64)
	return t, err == nil
}

// parseAck reads JetStream's answer to a publish: the stream sequence the message is
// stored at and whether it was a duplicate (stored before, within the duplicate
// window), or the error: *jetstream.APIError for every error the stream reports (wrong
// last sequence, stream not found, message too big, ...; the codes of
// jetstream.ErrorCode), jetstream.ErrNoStreamResponse for nats-server's 503 "no
// responders" (no stream captures the subject), and another error for any other status
// or an answer that is not a PubAck.
//
// The PubAck nats-server sends for a stored message is matched byte by byte, without
// allocating: {"stream":"<name>",["domain":"<domain>",]"seq":<n>} and the same with
// ,"duplicate": true before the brace. Anything else (errors, or a shape another server
// version sends) is decoded with encoding/json.
func parseAck(m *nats.Msg) (seq uint64, duplicate bool, err error) {
	if len(m.Data) == 0 {
		status := m.Header.Get("Status")
		if status == "503" {
			return 0, false, jetstream.ErrNoStreamResponse
		}
		return 0, false, fmt.Errorf("JetStream answered the publish with status %q %q", status, m.Header.Get("Description"))
	}
	if seq, duplicate, ok := fastAck(m.Data); ok {
		return seq, duplicate, nil
	}
	var ack struct {
		Error     *jetstream.APIError `json:"error"`
		Stream    string              `json:"stream"`
		Seq       uint64              `json:"seq"`
		Duplicate bool                `json:"duplicate"`
	}
	if err := json.Unmarshal(m.Data, &ack); err != nil {
		return 0, false, fmt.Errorf("JetStream's answer to a publish is not a PubAck: %w: %.200q", err, m.Data)
	}
	if ack.Error != nil {
		return 0, false, ack.Error
	}
	if ack.Stream == "" {
		return 0, false, fmt.Errorf("JetStream's answer to a publish names no stream: %.200q", m.Data)
	}
	return ack.Seq, ack.Duplicate, nil
}

// fastAck matches nats-server's PubAck of a stored message (parseAck); ok is false for
// anything else.
func fastAck(b []byte) (seq uint64, duplicate, ok bool) {
	skipString := func(key string) bool { // "<key>":"<no quote or backslash>",
		if !bytes.HasPrefix(b, []byte(key)) {
			return false
		}
		rest := b[len(key):]
		end := bytes.IndexByte(rest, '"')
		if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 || len(rest) <= end+1 || rest[end+1] != ',' {
			return false
		}
		b = rest[end+2:]
		return true
	}
	if !skipString(`{"stream":"`) {
		return 0, false, false
	}
	if bytes.HasPrefix(b, []byte(`"domain":"`)) && !skipString(`"domain":"`) {
		return 0, false, false
	}
	if !bytes.HasPrefix(b, []byte(`"seq":`)) {
		return 0, false, false
	}
	b = b[len(`"seq":`):]
	n := 0
	for n < len(b) && '0' <= b[n] && b[n] <= '9' {
		n++
	}
	if n == 0 || n > 20 {
		return 0, false, false
	}
	seq, err := strconv.ParseUint(string(b[:n]), 10, 64) // no allocation: the conversion does not escape
	if err != nil {
		return 0, false, false
	}
	switch rest := string(b[n:]); rest {
	case "}":
		return seq, false, true
	case `,"duplicate": true}`, `,"duplicate":true}`:
		return seq, true, true
	}
	return 0, false, false
}
