package hashcache_test

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/hashcache/hashcachetest"
	"github.com/kraftwatch/kraftwatch/internal/scripttest"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata/script/*.txt")

// TestScript runs the scripts in testdata/script. A script is a series of
// directives; each is a command line, optional input lines, a "----" line and the
// expected output, ended by a blank line or the end of the file. Lines before a
// command that start with '#' are comments. With -update the expected output is
// rewritten from what the commands print. internal/scripttest runs the scripts.
//
// Commands:
//
//	new [scheme=murmur3|kafka]   empty cluster and cache
//	broker ID [rack=R]           register broker ID, with rack R or none
//	unregister ID                remove broker ID
//	topic NAME id=N|MSB:LSB      create or replace a topic (id (0, N) or two hex
//	                             longs); one input line per partition: its
//	                             replica ids, "-" for none
//	delete-topic NAME            remove the topic from the cluster
//	hash NAME...                 topic hashes, with hit, miss or absent
//	group NAME...                the group hash of the subscribed names
//	invalidate [changed=A,B] [deleted=C] [brokers=1,2]
//	                             drop entries, print the dropped names
//	cached                       cached topic names
//	stats                        the cache counters
func TestScript(t *testing.T) {
	for _, file := range scripttest.Files(t, filepath.Join("testdata", "script")) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			runScript(t, file)
		})
	}
}

type scriptState struct {
	cluster *hashcachetest.Cluster
	cache   *hashcache.Cache
}

func runScript(t *testing.T, file string) {
	st := &scriptState{}
	st.reset(t, hashcache.DefaultScheme)
	scripttest.Run(t, file, *update, func(c scripttest.Case) []string {
		got, err := st.run(c)
		if err != nil {
			t.Fatalf("%s: %s: %v", c.Pos, c.Cmd, err)
		}
		if len(got) == 0 {
			got = []string{"ok"}
		}
		return got
	})
}

func (st *scriptState) reset(t *testing.T, scheme string) {
	t.Helper()
	c, err := hashcache.New(hashcache.Config{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	st.cache, st.cluster = c, hashcachetest.NewCluster()
}

// args splits "k=v" arguments from plain ones.
func args(fields []string) (plain []string, kv map[string]string) {
	kv = map[string]string{}
	for _, f := range fields {
		if k, v, ok := strings.Cut(f, "="); ok {
			kv[k] = v
		} else {
			plain = append(plain, f)
		}
	}
	return plain, kv
}

func brokerIDs(s string) ([]int32, error) {
	var ids []int32
	for f := range strings.SplitSeq(s, ",") {
		if f == "" {
			continue
		}
		n, err := strconv.ParseInt(f, 10, 32)
		if err != nil {
			return nil, err
		}
		ids = append(ids, int32(n))
	}
	return ids, nil
}

// topicID parses N (the id (0, N)) or MSB:LSB in hex.
func topicID(s string) ([16]byte, error) {
	if msb, lsb, ok := strings.Cut(s, ":"); ok {
		m, err1 := strconv.ParseUint(msb, 16, 64)
		l, err2 := strconv.ParseUint(lsb, 16, 64)
		if err1 != nil || err2 != nil {
			return [16]byte{}, fmt.Errorf("bad topic id %q", s)
		}
		return hashcachetest.ID(m, l), nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return [16]byte{}, fmt.Errorf("bad topic id %q", s)
	}
	return hashcachetest.ID(0, n), nil
}

func names(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func (st *scriptState) run(c scripttest.Case) ([]string, error) {
	plain, kv := args(c.Args)
	switch c.Cmd {
	case "new":
		cache, err := hashcache.New(hashcache.Config{Scheme: kv["scheme"]})
		if err != nil {
			return nil, err
		}
		st.cache, st.cluster = cache, hashcachetest.NewCluster()
		return []string{"scheme " + cache.Scheme().Name()}, nil
	case "broker", "unregister":
		if len(plain) != 1 {
			return nil, fmt.Errorf("want one broker id")
		}
		ids, err := brokerIDs(plain[0])
		if err != nil {
			return nil, err
		}
		rack, ok := kv["rack"]
		if c.Cmd == "broker" && ok {
			st.cluster.Racks[ids[0]] = rack
		} else {
			delete(st.cluster.Racks, ids[0])
		}
		return nil, nil
	case "topic":
		if len(plain) != 1 {
			return nil, fmt.Errorf("want a topic name")
		}
		id, err := topicID(kv["id"])
		if err != nil {
			return nil, err
		}
		top := &hashcachetest.Topic{TopicID: id, TopicName: plain[0]}
		for _, l := range c.Input {
			ids, err := brokerIDs(strings.Join(strings.Fields(strings.ReplaceAll(l, "-", "")), ","))
			if err != nil {
				return nil, err
			}
			top.Partitions = append(top.Partitions, ids)
		}
		st.cluster.Add(top)
		return nil, nil
	case "delete-topic":
		for _, n := range plain {
			delete(st.cluster.Topics, n)
		}
		return nil, nil
	case "hash":
		var out []string
		for _, n := range plain {
			before := st.cache.Stats()
			h, ok := st.cache.TopicHash(st.cluster, n)
			after := st.cache.Stats()
			how := "absent"
			switch {
			case ok && after.Hits > before.Hits:
				how = "hit"
			case ok && after.Stale > before.Stale:
				how = "miss (stale entry)"
			case ok:
				how = "miss"
			}
			out = append(out, fmt.Sprintf("%s %016x %s", n, uint64(h), how))
		}
		return out, nil
	case "group":
		return []string{fmt.Sprintf("group %016x", uint64(st.cache.GroupHash(st.cluster, plain)))}, nil
	case "invalidate":
		ids, err := brokerIDs(kv["brokers"])
		if err != nil {
			return nil, err
		}
		dropped := st.cache.Invalidate(hashcache.Invalidation{
			Changed: names(kv["changed"]), Deleted: names(kv["deleted"]), Brokers: ids,
		}, nil)
		if len(dropped) == 0 {
			return []string{"dropped: none"}, nil
		}
		return []string{"dropped: " + strings.Join(dropped, " ")}, nil
	case "cached":
		cached := hashcache.CachedNames(st.cache)
		if len(cached) == 0 {
			return []string{"cached: none"}, nil
		}
		return []string{"cached: " + strings.Join(cached, " ")}, nil
	case "stats":
		s := st.cache.Stats()
		return []string{fmt.Sprintf("hits=%d misses=%d invalidations=%d stale=%d entries=%d",
			s.Hits, s.Misses, s.Invalidations, s.Stale, st.cache.Len())}, nil
	}
	return nil, fmt.Errorf("unknown command %q", c.Cmd)
}
