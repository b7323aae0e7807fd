package groups

import (
	"strconv"

	"github.com/kraftwatch/kraftwatch/events"
	"github.com/kraftwatch/kraftwatch/image"
)

// CheckSkip says why a group's kafka-scheme hash is not compared with the
// MetadataHash its coordinator stored, or CheckCompared when it is.
type CheckSkip uint8

// The reasons, in the order CheckCoordinatorHash tries them.
const (
	// CheckCompared: the group was compared.
	CheckCompared CheckSkip = iota
	// SkipClassic: classic groups store no MetadataHash.
	SkipClassic
	// SkipNoMetadata: the group's metadata record was not seen (compacted away or not
	// written yet).
	SkipNoMetadata
	// SkipNoStoredHash: the coordinator stored no hash (0; Kafka 4.0 writes none).
	SkipNoStoredHash
	// SkipNoMembers: a group without members is never refreshed and keeps the hash of
	// its last member's time.
	SkipNoMembers
	// SkipUnregisteredBroker: the hashes differ while a topic of the group has a
	// replica on a broker that is not registered. The coordinator does not recompute a
	// hash when a broker is unregistered (no topic record changes), so its stored hash
	// keeps the broker's rack until the topic changes, where kraftwatch's follows the
	// registrations at once.
	SkipUnregisteredBroker
)

var checkSkipNames = [...]string{
	CheckCompared:          "compared",
	SkipClassic:            "classic group: no stored MetadataHash",
	SkipNoMetadata:         "no group metadata record",
	SkipNoStoredHash:       "no stored MetadataHash",
	SkipNoMembers:          "no members: the coordinator does not refresh an empty group's hash",
	SkipUnregisteredBroker: "a replica is on an unregistered broker: the coordinator does not recompute then",
}

// String says the reason in a few words, or "CheckSkip(N)".
func (s CheckSkip) String() string {
	if int(s) < len(checkSkipNames) {
		return checkSkipNames[s]
	}
	return "CheckSkip(" + strconv.Itoa(int(s)) + ")"
}

// CoordinatorCheck is the outcome of comparing one group's hash with the
// coordinator's.
type CoordinatorCheck struct {
	// Skip is CheckCompared, or why the group was not compared.
	Skip CheckSkip
	// Hash is the kafka-scheme hash of the group's topics (set when the rules needed
	// it: compared, or skipped for an unregistered broker).
	Hash int64
	// Agrees reports, for a compared group, that Hash is the stored MetadataHash.
	Agrees bool
}

// CheckCoordinatorHash applies the one rule set by which both kraftwatch's
// coordinator check (the engine's metric) and `kraftwatch verify` compare a group's
// kafka-scheme hash with the MetadataHash its coordinator stored: only groups the
// coordinator keeps refreshing are compared, and a disagreement explained by an
// unregistered broker is not one (see the CheckSkip values). topics are the group's
// subscribed topics as its hash covers them; hash computes that hash and is called
// only when the cheaper rules did not skip the group. It does no I/O.
func CheckCoordinatorHash(g *Group, im *image.Image, topics []string, hash func() int64) CoordinatorCheck {
	switch {
	case g.Key.Type == events.ClassicGroup:
		return CoordinatorCheck{Skip: SkipClassic}
	case !g.HasMetadata:
		return CoordinatorCheck{Skip: SkipNoMetadata}
	case g.MetadataHash == 0:
		return CoordinatorCheck{Skip: SkipNoStoredHash}
	case g.NumMembers() == 0:
		return CoordinatorCheck{Skip: SkipNoMembers}
	}
	h := hash()
	if h == g.MetadataHash {
		return CoordinatorCheck{Hash: h, Agrees: true}
	}
	if onUnregisteredBroker(im, topics) {
		return CoordinatorCheck{Skip: SkipUnregisteredBroker, Hash: h}
	}
	return CoordinatorCheck{Hash: h}
}

// onUnregisteredBroker reports whether a replica of one of the topics is on a broker
// that is not registered in im.
func onUnregisteredBroker(im *image.Image, topics []string) bool {
	for _, name := range topics {
		t, ok := im.TopicByName(name)
		if !ok {
			continue
		}
		for p := range t.Partitions() {
			for _, id := range p.Replicas() {
				if _, ok := im.Broker(id); !ok {
					return true
				}
			}
		}
	}
	return false
}
