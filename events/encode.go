package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// Marshal validates e and returns its id (MsgID) and the JSON of its CloudEvent, whose
// time is e.Time, or now when e.Time is zero (in UTC): byte for byte what json.Marshal gives for
// e.Wrap's Envelope (TestMarshalMatchesJSON, FuzzMarshal), without its reflection and
// per-field allocations. kraftwatch publishes with it; errors wrap ErrInvalidEvent.
func (e *RebalanceNeeded) Marshal(now time.Time) (id string, body []byte, err error) {
	if err := e.Validate(); err != nil {
		return "", nil, err
	}
	t := e.Time
	if t.IsZero() {
		t = now
	}
	t = t.UTC()
	id = e.MsgID()
	body, ok := appendEnvelope(make([]byte, 0, e.envelopeCap()), e, id, t)
	if !ok {
		env, err := e.Wrap(t)
		if err == nil {
			_, err = json.Marshal(env)
		}
		if err == nil {
			err = errors.New("a time JSON cannot carry")
		}
		return "", nil, fmt.Errorf("%w: group %q: %w", ErrInvalidEvent, e.GroupID, err)
	}
	return id, body, nil
}

// envelopeCap is the buffer appendEnvelope usually needs for e (more when strings need
// escapes).
func (e *RebalanceNeeded) envelopeCap() int {
	n := 560 + 2*len(e.ClusterID) + 2*len(e.GroupID)
	for i := range e.Reasons {
		n += 200 + len(e.Reasons[i].Topic) + len(e.Reasons[i].Regex)
	}
	for i := range e.Topics {
		n += 100 + len(e.Topics[i].Name)
	}
	return n
}

// appendEnvelope appends the JSON of the rebalance-needed CloudEvent of ev (validated)
// with the given id and time. ok is false when a time is one time.Time's MarshalJSON
// refuses (jsonTime); json.Marshal then reports the error.
func appendEnvelope(b []byte, ev *RebalanceNeeded, id string, t time.Time) (_ []byte, ok bool) {
	if !jsonTime(t) {
		return b, false
	}
	for i := range ev.Reasons {
		if r := &ev.Reasons[i]; !r.Time.IsZero() && !jsonTime(r.Time) {
			return b, false
		}
	}
	b = append(b, `{"specversion":"`+SpecVersion+`","id":`...)
	b = appendString(b, id)
	b = append(b, `,"source":"`+SourcePrefix...)
	b = appendStringBody(b, ev.ClusterID)
	b = append(b, `","type":"`+TypeRebalanceNeeded+`","subject":"group/`...)
	b = append(b, ev.GroupType.String()...)
	b = append(b, '/')
	b = appendStringBody(b, ev.GroupID)
	b = append(b, `","time":"`...)
	b = t.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","datacontenttype":"`+DataContentType+`","data":{"cluster_id":`...)
	b = appendString(b, ev.ClusterID)
	b = append(b, `,"group_id":`...)
	b = appendString(b, ev.GroupID)
	b = append(b, `,"group_type":"`...)
	b = append(b, ev.GroupType.String()...)
	b = append(b, `","hash_scheme":`...)
	b = appendString(b, ev.HashScheme)
	b = append(b, `,"previous_hash":`...)
	if ev.PreviousHash.Valid {
		b = appendHash(b, ev.PreviousHash.Hash)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"new_hash":`...)
	b = appendHash(b, ev.NewHash)
	b = append(b, `,"reasons":[`...)
	for i := range ev.Reasons {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendReason(b, &ev.Reasons[i])
	}
	b = append(b, ']')
	if ev.Topics != nil {
		b = append(b, `,"topics":[`...)
		for i := range ev.Topics {
			t := &ev.Topics[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendString(b, t.Name)
			b = append(b, `,"topic_id":`...)
			b = appendString(b, t.TopicID)
			b = append(b, `,"partitions":`...)
			b = strconv.AppendInt(b, int64(t.Partitions), 10)
			b = append(b, `,"hash":`...)
			b = appendHash(b, t.Hash)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if ev.TopicsTruncated {
		b = append(b, `,"topics_truncated":true`...)
	}
	b = append(b, `,"metadata_offset":`...)
	b = strconv.AppendInt(b, ev.MetadataOffset, 10)
	b = append(b, `,"metadata_epoch":`...)
	b = strconv.AppendInt(b, int64(ev.MetadataEpoch), 10)
	if c := ev.ConsumerOffsets; c != nil {
		b = append(b, `,"consumer_offsets":{"partition":`...)
		b = strconv.AppendInt(b, int64(c.Partition), 10)
		b = append(b, `,"offset":`...)
		b = strconv.AppendInt(b, c.Offset, 10)
		b = append(b, '}')
	}
	b = append(b, `,"coordinator_epoch":`...)
	b = strconv.AppendInt(b, int64(ev.CoordinatorEpoch), 10)
	return append(b, "}}"...), true
}

func appendReason(b []byte, r *Reason) []byte {
	b = append(b, `{"kind":"`...)
	b = append(b, r.Kind.String()...)
	b = append(b, `","topic":`...)
	b = appendString(b, r.Topic)
	if r.TopicID != "" {
		b = append(b, `,"topic_id":`...)
		b = appendString(b, r.TopicID)
	}
	if r.OldTopicID != "" {
		b = append(b, `,"old_topic_id":`...)
		b = appendString(b, r.OldTopicID)
	}
	if r.OldPartitions != 0 {
		b = append(b, `,"old_partitions":`...)
		b = strconv.AppendInt(b, int64(r.OldPartitions), 10)
	}
	if r.NewPartitions != 0 {
		b = append(b, `,"new_partitions":`...)
		b = strconv.AppendInt(b, int64(r.NewPartitions), 10)
	}
	if r.Regex != "" {
		b = append(b, `,"regex":`...)
		b = appendString(b, r.Regex)
	}
	if r.MetadataOffset != 0 {
		b = append(b, `,"metadata_offset":`...)
		b = strconv.AppendInt(b, r.MetadataOffset, 10)
	}
	if !r.Time.IsZero() {
		b = append(b, `,"time":"`...)
		b = r.Time.AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	}
	return append(b, '}')
}

// jsonTime reports whether time.Time's MarshalJSON accepts t: a year from 0 to 9999 and
// a zone offset under 24 hours.
func jsonTime(t time.Time) bool {
	_, off := t.Zone()
	return t.Year() >= 0 && t.Year() <= 9999 && off > -24*3600 && off < 24*3600
}

// appendHash appends a hash as JSON does (Hash.MarshalText): a decimal string.
func appendHash(b []byte, h Hash) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, int64(h), 10)
	return append(b, '"')
}

// appendString appends s as a JSON string, escaped as encoding/json escapes it.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendStringBody(b, s)
	return append(b, '"')
}

const hexDigits = "0123456789abcdef"

// appendStringBody appends s escaped as encoding/json does by default (HTML-safe):
// '"' and '\\' and the control characters escaped (\b \f \n \r \t by name), '<' '>' '&'
// and U+2028 U+2029 as \u escapes, and each invalid UTF-8 byte as \ufffd.
func appendStringBody(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(b, s[start:]...)
}
