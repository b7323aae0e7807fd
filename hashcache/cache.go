package hashcache

import (
	"slices"
	"strings"
)

// Config configures a Cache.
type Config struct {
	// Scheme is SchemeMurmur3 (the default when empty) or SchemeKafka.
	Scheme string
}

// Validate reports a configuration error.
func (c Config) Validate() error {
	_, err := NewScheme(c.Scheme)
	return err
}

// Stats counts cache activity since New.
type Stats struct {
	// Hits are reads served from the cache.
	Hits uint64
	// Misses are reads that computed a hash (including Stale ones).
	Misses uint64
	// Invalidations are entries dropped by Invalidate or Clear.
	Invalidations uint64
	// Stale are entries found out of date on read: the topic no longer exists or
	// has another id. Non-zero means a delta was not passed to Invalidate, or a
	// topic was recreated under the same name within one delta.
	Stale uint64
}

// Cache holds topic hashes by topic name, each with the topic id it was computed
// for. It is not safe for concurrent use.
//
// Invalidation by broker scans the cached entries instead of keeping a reverse
// index broker -> topics. Each entry stores the sorted distinct ids of the brokers
// its hash read (registered or not), so an entry is dropped exactly when one of
// those brokers changed. A rack change or an unregistration is rare (a broker
// restart with a new rack, a decommission), while entries are added and dropped on
// every partition change; the scan puts the cost, O(entries x brokers per topic),
// on the rare event and keeps the frequent paths free of index upkeep.
type Cache struct {
	scheme  Scheme
	entries map[string]entry
	stats   Stats

	spare   [][]int32   // broker slices of dropped entries, for reuse
	hashes  []NamedHash // GroupHash scratch
	changed []int32     // Invalidate scratch
}

type entry struct {
	id      [16]byte
	hash    int64
	brokers []int32 // sorted, distinct
}

const maxSpare = 1024

// New returns an empty cache.
func New(cfg Config) (*Cache, error) {
	s, err := NewScheme(cfg.Scheme)
	if err != nil {
		return nil, err
	}
	return &Cache{scheme: s, entries: make(map[string]entry)}, nil
}

// Scheme returns the cache's scheme.
func (c *Cache) Scheme() Scheme { return c.scheme }

// Stats returns the counters.
func (c *Cache) Stats() Stats { return c.stats }

// Len returns the number of cached entries.
func (c *Cache) Len() int { return len(c.entries) }

// TopicHash returns the hash of topic name in cl, from the cache when an entry
// for the same topic id is present. ok is false, and the hash 0, when cl has no
// such topic.
func (c *Cache) TopicHash(cl Cluster, name string) (hash int64, ok bool) {
	t, ok := cl.Topic(name)
	e, cached := c.entries[name]
	if !ok {
		if cached {
			c.stats.Stale++
			delete(c.entries, name)
			c.release(e.brokers)
		}
		return 0, false
	}
	id := t.ID()
	if cached {
		if e.id == id {
			c.stats.Hits++
			return e.hash, true
		}
		c.stats.Stale++
		c.release(e.brokers)
	}
	c.stats.Misses++
	h := c.scheme.TopicHash(t, cl)
	seen := c.scheme.brokersSeen()
	brokers := c.alloc(len(seen))
	copy(brokers, seen)
	slices.Sort(brokers)
	c.entries[name] = entry{id: id, hash: h, brokers: brokers}
	return h, true
}

// GroupHash returns the group hash of the subscribed topic names: the scheme's
// combination of the hashes of those that exist in cl. Duplicate names count once.
// topics is not modified.
func (c *Cache) GroupHash(cl Cluster, topics []string) int64 {
	hs := c.hashes[:0]
	for _, name := range topics {
		if h, ok := c.TopicHash(cl, name); ok {
			hs = append(hs, NamedHash{Name: name, Hash: h})
		}
	}
	slices.SortFunc(hs, func(a, b NamedHash) int { return strings.Compare(a.Name, b.Name) })
	hs = slices.CompactFunc(hs, func(a, b NamedHash) bool { return a.Name == b.Name })
	g := c.scheme.GroupHash(hs)
	clear(hs) // do not keep names alive
	c.hashes = hs[:0]
	return g
}

// Invalidation names what a metadata delta changed.
type Invalidation struct {
	// Changed are topics created or changed by the delta (any partition record),
	// by their name in the new image.
	Changed []string
	// Deleted are topics deleted by the delta, by their name in the old image.
	Deleted []string
	// Brokers are brokers whose rack changed, that registered, or that were
	// unregistered.
	Brokers []int32
}

// Invalidate drops the entries that inv makes stale and appends their names to
// dropped, sorted; it returns the extended slice. Only cached entries are reported.
// Dropped entries are recomputed on their next read.
func (c *Cache) Invalidate(inv Invalidation, dropped []string) []string {
	start := len(dropped)
	for _, names := range [2][]string{inv.Changed, inv.Deleted} {
		for _, name := range names {
			if e, ok := c.entries[name]; ok {
				c.drop(name, e)
				dropped = append(dropped, name)
			}
		}
	}
	if len(inv.Brokers) > 0 && len(c.entries) > 0 {
		changed := append(c.changed[:0], inv.Brokers...)
		slices.Sort(changed)
		for name, e := range c.entries {
			if intersects(e.brokers, changed) {
				c.drop(name, e)
				dropped = append(dropped, name)
			}
		}
		c.changed = changed
	}
	slices.Sort(dropped[start:])
	return dropped
}

// Clear drops every entry, as after loading a new snapshot.
func (c *Cache) Clear() {
	for name, e := range c.entries {
		c.drop(name, e)
	}
}

func (c *Cache) drop(name string, e entry) {
	delete(c.entries, name)
	c.release(e.brokers)
	c.stats.Invalidations++
}

func (c *Cache) alloc(n int) []int32 {
	for i := len(c.spare) - 1; i >= 0 && i >= len(c.spare)-8; i-- {
		if s := c.spare[i]; cap(s) >= n {
			c.spare[i] = c.spare[len(c.spare)-1]
			c.spare = c.spare[:len(c.spare)-1]
			return s[:n]
		}
	}
	return make([]int32, n)
}

func (c *Cache) release(s []int32) {
	if cap(s) > 0 && len(c.spare) < maxSpare {
		c.spare = append(c.spare, s)
	}
}

// intersects reports whether the sorted slices a and b share an element.
func intersects(a, b []int32) bool {
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] == b[0]:
			return true
		case a[0] < b[0]:
			a = a[1:]
		default:
			b = b[1:]
		}
	}
	return false
}
