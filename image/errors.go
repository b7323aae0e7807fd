package image

import "errors"

// Errors returned by Delta.Replay. Each is wrapped with the record and what was
// wrong; the record is then not applied, and the Delta stays usable. Kafka's own
// loader reports and skips such records the same way.
var (
	// ErrUnknownTopic: a record refers to a topic id or name the delta does not have.
	ErrUnknownTopic = errors.New("image: unknown topic")
	// ErrUnknownPartition: a PartitionChangeRecord for a partition that does not exist.
	ErrUnknownPartition = errors.New("image: unknown partition")
	// ErrUnknownBroker: a change for a broker that is not registered.
	ErrUnknownBroker = errors.New("image: unknown broker")
	// ErrBrokerEpoch: a change whose broker epoch is not the registered one.
	ErrBrokerEpoch = errors.New("image: broker epoch mismatch")
	// ErrTransaction: Begin inside a transaction, or End or Abort outside one.
	ErrTransaction = errors.New("image: bad metadata transaction")
	// ErrInvalid: a field value Kafka would reject (a leader recovery state of 7, a
	// directory list that does not match the replicas, a topic name already taken).
	ErrInvalid = errors.New("image: invalid record")
)
