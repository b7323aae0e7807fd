// Package hashcache computes per-topic metadata hashes and group hashes in two
// schemes, and caches topic hashes between metadata deltas.
//
// # Input
//
// A hash reads only what [Cluster] exposes: per topic its id, name, partition count
// and the replica broker ids of each partition, and per broker its rack (absent when
// the broker is not registered or has no rack). Leaders, ISR, epochs, directories and
// fencing are not part of the input, so they cannot change a hash. image.Image is
// meant to satisfy Cluster through a thin adapter.
//
// # Scheme "murmur3" (default)
//
// Topic hash = the first 64 bits of MurmurHash3 x64_128 (seed 0,
// github.com/spaolacci/murmur3 Sum64) over this byte stream; all integers are
// unsigned 32-bit big-endian:
//
//	u8      scheme version, 0x01
//	[16]u8  topic id as on the wire (most significant long, then least, big-endian)
//	u32     len(name) in bytes, then the name's bytes
//	u32     partition count N
//	N times, for partition i = 0 … N-1:
//	  u32   i
//	  u32   R = number of distinct racks among the partition's replicas
//	  R times, racks in ascending bytewise order (Go string order):
//	    u32 len(rack) in bytes, then the rack's bytes
//
// Replicas on unregistered brokers or brokers without a rack add nothing; a rack that
// is the empty string is a rack (length 0). The per-partition rack count makes the
// stream injective: two different inputs never produce the same bytes. Hashing
// partitions in order (rather than summing a hash per partition, as the seed design
// did) means moving a rack from one partition to another changes the hash.
//
// Group hash (AllTopicHash) = the wrapping int64 sum of the topic hashes of the
// group's subscribed topics that exist; 0 for none.
//
// # Scheme "kafka"
//
// Bit for bit the MetadataHash that Apache Kafka 4.1 and later stores for consumer,
// share and streams groups (group-coordinator Utils.computeTopicHash and
// computeGroupHash, hashing with hash4j's streaming XXH3-64, seed 0). Topic hash =
// XXH3-64 (github.com/zeebo/xxh3) as a signed int64 over, little-endian throughout:
//
//	u8      0x00 (magic byte)
//	i64     most significant long of the topic id
//	i64     least significant long of the topic id
//	string  name
//	i32     partition count N
//	N times, for partition i = 0 … N-1:
//	  i32   i
//	  for each rack of the partition's replicas, in Java String order:
//	    i32    rack length in UTF-16 code units
//	    string rack
//
// where string is hash4j's putString: each UTF-16 code unit as 2 bytes, then the
// number of code units as i32 (so a rack's length appears twice). The racks of a
// partition are those of its replicas, in replica order, skipping replicas whose
// broker is not registered or has no rack, duplicates kept, then sorted by UTF-16
// code units (String.compareTo), which differs from Go's byte order for strings that
// mix supplementary characters with U+E000…U+FFFF. Go strings are converted to
// UTF-16 as by utf16.Encode([]rune(s)), so an invalid UTF-8 byte counts as one
// U+FFFD; Kafka itself never produces invalid UTF-8 for a rack or a name.
//
// Group hash: 0 for no topics; otherwise XXH3-64 over each existing subscribed
// topic's hash as i64 little-endian, in Java String order of the topic names.
// Nonexistent topics are left out.
//
// # Cache
//
// [Cache] maps a topic name to its hash and the topic id it was computed for; a read
// whose topic id differs (the topic was deleted and recreated) recomputes. Entries
// are dropped by [Cache.Invalidate] for changed, created and deleted topics and for
// every cached topic with a replica on a broker whose rack changed, that registered,
// or that was unregistered. Kafka's own coordinator does not drop entries on broker
// changes. Dropped entries are recomputed lazily, on the next read.
//
// # Concurrency and purity
//
// The package does no I/O, starts no goroutines, reads no clock and does not log.
// Schemes and Cache keep scratch buffers and are not safe for concurrent use; the
// goroutine that applies metadata deltas should own them.
package hashcache
