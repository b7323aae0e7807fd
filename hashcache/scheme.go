package hashcache

import (
	"fmt"
	"strings"
)

// Scheme names, as KRAFTWATCH_HASH_SCHEME takes them.
const (
	SchemeMurmur3 = "murmur3"
	SchemeKafka   = "kafka"
	// DefaultScheme is the scheme used when none is configured.
	DefaultScheme = SchemeMurmur3
)

// Scheme computes topic hashes and combines them into group hashes. The package
// doc gives each scheme's exact bytes. A Scheme keeps scratch buffers: it is not
// safe for concurrent use, and its methods do not allocate once the buffers have
// grown to the largest topic seen.
type Scheme interface {
	// Name returns SchemeMurmur3 or SchemeKafka.
	Name() string
	// TopicHash returns the hash of t with racks resolved through b.
	TopicHash(t Topic, b Brokers) int64
	// GroupHash combines the hashes of a group's subscribed topics that exist.
	// Names must be distinct. It may reorder hs. No topics give 0.
	GroupHash(hs []NamedHash) int64

	// brokersSeen returns the distinct broker ids that the last TopicHash read
	// (registered or not), in no particular order; valid until the next call.
	brokersSeen() []int32
}

// NewScheme returns a new Scheme by name; "" selects DefaultScheme.
func NewScheme(name string) (Scheme, error) {
	switch name {
	case SchemeMurmur3, "":
		return NewMurmur3(), nil
	case SchemeKafka:
		return NewKafka(), nil
	}
	return nil, fmt.Errorf("%w %q (want %s)", ErrUnknownScheme, name,
		strings.Join([]string{SchemeMurmur3, SchemeKafka}, " or "))
}
