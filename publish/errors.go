package publish

import (
	"errors"
)

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
