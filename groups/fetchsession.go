package groups

import (
	"math"
	"slices"

	"github.com/segmentio/kafka-go"
)

// fetchSession is the client's side of a Kafka fetch session (KIP-227) on one
// connection to a leader, as Kafka's FetchSessionHandler keeps it: the first request
// lists every partition (a full request, epoch 0) and the broker answers with a session
// id; each later request carries that id and the next epoch, lists only the partitions
// whose fetch offset changed or that are new to the session, and forgets those left
// out; the broker answers only partitions with records, a new high watermark or log
// start offset, or an error. An error of the session's (FETCH_SESSION_ID_NOT_FOUND,
// INVALID_FETCH_SESSION_EPOCH) makes the next request full again; a new connection
// starts a new session. A broker below Fetch v7 is fetched without a session: every
// request is full. It does no I/O and is owned by the connection's fetcher.
type fetchSession struct {
	id    int32 // the broker's session id; 0 before the broker gave one
	epoch int32 // the next request's epoch: 0 full, -1 sessionless (every request full)
	// parts is each partition of the session, with the fetch offset the broker holds
	// for it as of the last request built.
	parts map[int]sessionPart
	round uint64 // requests built
}

// sessionPart is a partition of a fetch session: its fetch offset, and the last
// request that held it.
type sessionPart struct {
	offset int64
	round  uint64
}

// Fetch versions with sessions, and the epochs of Kafka's FetchMetadata.
const (
	minSessionFetchVersion = 7
	initialEpoch           = 0  // a full request, which opens a session
	finalEpoch             = -1 // a full request, without a session
)

func newFetchSession(fetchV int16) fetchSession {
	if fetchV < minSessionFetchVersion {
		return fetchSession{epoch: finalEpoch}
	}
	return fetchSession{epoch: initialEpoch}
}

// full reports whether the next request lists every partition.
func (s *fetchSession) full() bool { return s.epoch <= initialEpoch }

// next makes ps, at offsets, the session's partitions for the next request. send holds
// the indexes in ps of the partitions it lists (all of them in a full request),
// forget the partitions of the session it drops, in order.
func (s *fetchSession) next(ps []int, offsets []int64) (send, forget []int) {
	if s.epoch == finalEpoch {
		for i := range ps {
			send = append(send, i)
		}
		return send, nil
	}
	full := s.full()
	if s.parts == nil {
		s.parts = make(map[int]sessionPart, len(ps))
	} else if full {
		clear(s.parts)
	}
	s.round++
	for i, p := range ps {
		if sp, ok := s.parts[p]; full || !ok || sp.offset != offsets[i] {
			send = append(send, i)
		}
		s.parts[p] = sessionPart{offset: offsets[i], round: s.round}
	}
	for p, sp := range s.parts {
		if sp.round != s.round {
			forget = append(forget, p)
			delete(s.parts, p)
		}
	}
	slices.Sort(forget)
	return send, forget
}

// answered moves the session on after the broker answered the last request with
// session id and top-level error code (0: none). After an error the next request is
// full: a new session after FETCH_SESSION_ID_NOT_FOUND (the broker no longer holds
// it), else the same id at epoch 0, which closes the old session and opens a new one.
// reset reports that the broker refused an incremental request's session with
// FETCH_SESSION_ID_NOT_FOUND or INVALID_FETCH_SESSION_EPOCH; either code for a full
// request is the broker's error, for the caller to handle like any other.
func (s *fetchSession) answered(id int32, code kafka.Error) (reset bool) {
	switch {
	case s.epoch == finalEpoch:
		return false
	case code == kafka.FetchSessionIDNotFound || code == kafka.InvalidFetchSessionEpoch:
		reset = !s.full()
		if code == kafka.FetchSessionIDNotFound {
			s.id = 0
		}
		s.epoch = initialEpoch
		return reset
	case code != 0:
		s.epoch = initialEpoch
	case id == 0: // no session made (the broker's cache is full), or the broker closed it
		*s = fetchSession{epoch: initialEpoch}
	case s.epoch == initialEpoch:
		s.id, s.epoch = id, 1
	case s.epoch == math.MaxInt32: // the epoch after the largest is 1, never 0 or -1
		s.epoch = 1
	default:
		s.epoch++
	}
	return false
}
