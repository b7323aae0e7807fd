package publish

import (
	"errors"

	"github.com/kraftwatch/kraftwatch/events"
)

// ErrBadToken reports a subject token that EscapeToken cannot have produced
// (events.ErrBadToken).
var ErrBadToken = events.ErrBadToken

// ErrHashedToken reports a token that stands for a group id too long to escape whole;
// UnescapeToken returns the id's prefix with it (events.ErrHashedToken).
var ErrHashedToken = events.ErrHashedToken

// ErrBadSubject reports a subject that is not <prefix>.<cluster>.group.<type>.<group>
// (events.ErrBadSubject).
var ErrBadSubject = events.ErrBadSubject

// ErrInvalidEvent reports an event that Enqueue refuses (unknown group type or reason
// kind, a cluster id that is not the publisher's, ...); nothing is queued. It is
// events.ErrInvalidEvent, which Event.Validate and Wrap return.
var ErrInvalidEvent = events.ErrInvalidEvent

// ErrNotEvent reports bytes that Decode cannot read as a rebalance-needed CloudEvent
// (events.ErrNotEvent).
var ErrNotEvent = events.ErrNotEvent

// ErrInvalidConfig reports a Config that Validate refuses; the message names each bad
// field.
var ErrInvalidConfig = errors.New("publish: invalid config")

// ErrClosed reports an Enqueue after Run began to shut down, or a second Run.
var ErrClosed = errors.New("publish: publisher closed")

// ErrDrainTimeout reports that Run returned with events still unpublished because the
// drain timeout ran out; the error message gives their number.
var ErrDrainTimeout = errors.New("publish: drain timeout")

// ErrStreamConfig reports an existing stream that captures this cluster's subjects in a
// way kraftwatch cannot use (see the package doc, "Subjects and the streams"), and that
// kraftwatch does not update by itself; the message says what to change. The publisher
// keeps retrying (and is not ready) until the stream is fixed.
var ErrStreamConfig = errors.New("publish: stream configuration")
