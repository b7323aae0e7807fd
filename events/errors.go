package events

import "errors"

// ErrNotEvent reports bytes that Decode cannot read as a kraftwatch event: not JSON, not
// a CloudEvents 1.0 structured-mode event, or breaking its type's JSON Schema (a missing,
// null or wrong-typed member, a bad value; members Decode does not know are not errors).
// The message says what and where.
var ErrNotEvent = errors.New("events: not a valid kraftwatch event")

// ErrUnknownType reports a well-formed CloudEvent whose type this version of the package
// does not know (a newer kraftwatch's, or another producer's); Decode returns it with the
// event's attributes filled and Data nil, so a subscriber can skip the event, or stop.
var ErrUnknownType = errors.New("events: unknown event type")

// ErrInvalidEvent reports event data that Validate refuses (unknown group type or reason
// kind, a topic id of the wrong form, a negative offset, ...).
var ErrInvalidEvent = errors.New("events: invalid event")

// ErrBadToken reports a subject token that EscapeToken cannot have produced.
var ErrBadToken = errors.New("events: bad subject token")

// ErrHashedToken reports a token that stands for a group id too long to escape whole;
// UnescapeToken returns the id's prefix with it. The full id is in the event's data.
var ErrHashedToken = errors.New("events: hashed token holds only a prefix of the id")

// ErrBadSubject reports a subject that is not <prefix>.<cluster>.group.<type>.<group>.
var ErrBadSubject = errors.New("events: bad subject")
