package hashcache_test

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/spaolacci/murmur3"
	"github.com/zeebo/xxh3"

	"github.com/kraftwatch/kraftwatch/hashcache"
	"github.com/kraftwatch/kraftwatch/hashcache/hashcachetest"
)

// The vectors of docs/kafka-hash.md#test-vectors, computed with hash4j and
// zeebo/xxh3.

func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestXXH3Vectors(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want uint64
	}{
		{"empty", nil, 0x2d06800538d394c2},
		{"a", []byte("a"), 0xe6c632b61e964e1f},
		{"abc", []byte("abc"), 0x78af5f94892f3950},
		{"fox", []byte("The quick brown fox jumps over the lazy dog"), 0xce7d19a5418fb365},
		{"seq16", seq(16), 0x8355e3a6f61770db},
		{"seq128", seq(128), 0x85c6174c7ff4c46b},
		{"seq240", seq(240), 0x375a384d957fe865},
		{"seq241", seq(241), 0x02e8cd95421c6d02},
		{"seq1024", seq(1024), 0xa870f92984398d22},
		{"seq2048", seq(2048), 0xdd420471ff96bd00},
		{"putLong(0)", make([]byte, 8), 0xc77b3abb6f87acd9},
		{"putInt(0)", make([]byte, 4), 0x48b2c92616fc193d},
		{"putString(abc)", []byte{0x61, 0, 0x62, 0, 0x63, 0, 3, 0, 0, 0}, 0x0433f3985876b03c},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := xxh3.Hash(tc.in); got != tc.want {
				t.Errorf("xxh3.Hash = %#016x, want %#016x", got, tc.want)
			}
			// The streaming hasher, fed in uneven pieces, must agree.
			h := xxh3.New()
			for p := tc.in; len(p) > 0; {
				n := min(len(p), 7)
				h.Write(p[:n])
				p = p[n:]
			}
			if got := h.Sum64(); got != tc.want {
				t.Errorf("streaming = %#016x, want %#016x", got, tc.want)
			}
		})
	}
}

// specCluster holds the topics of docs/kafka-hash.md#test-vectors.
func specCluster() *hashcachetest.Cluster {
	c := hashcachetest.NewCluster()
	for id, rack := range map[int32]string{
		0: "rack0", 1: "rack1", 2: "rack2",
		100: "us-east-1a", 101: "us-east-1b", 102: "us-east-1c",
		200: "a", 201: "a", 202: "b",
		300: "r\U0001F600", 301: "r\uFFFD",
	} {
		c.Racks[id] = rack
	}
	c.Add(&hashcachetest.Topic{
		TopicID: hashcachetest.ID(0x0123456789abcdef, 0xfedcba9876543210), TopicName: "foo",
		Partitions: [][]int32{{0, 1}, {2, 1}},
	})
	c.Add(&hashcachetest.Topic{
		TopicID: hashcachetest.ID(0x1111111111111111, 0x2222222222222222), TopicName: "bar",
		Partitions: [][]int32{{7}, {8, 9}, {}}, // brokers without a rack
	})
	big := &hashcachetest.Topic{
		TopicID: hashcachetest.ID(0x7fffffffffffffff, 0x8000000000000000), TopicName: "orders.v1_big-topic",
	}
	for i := range 40 {
		big.Partitions = append(big.Partitions,
			[]int32{100 + int32((i+2)%3), 100 + int32(i%3), 100 + int32((i+1)%3)})
	}
	c.Add(big)
	c.Add(&hashcachetest.Topic{
		TopicID: hashcachetest.ID(0, 1), TopicName: "dup",
		Partitions: [][]int32{{202, 200, 201}},
	})
	c.Add(&hashcachetest.Topic{
		TopicID: hashcachetest.ID(0xffffffffffffffff, 0xfffffffffffffffe), TopicName: "nb",
		Partitions: [][]int32{{300, 301}},
	})
	return c
}

func TestKafkaTopicVectors(t *testing.T) {
	c := specCluster()
	tests := []struct {
		topic  string
		want   uint64
		length int
	}{
		{"foo", 0x3ab7dc17403bfe50, 111},
		{"bar", 0x866aadf195dd221d, 0},
		{"orders.v1_big-topic", 0x98df215db909aa84, 3583},
		{"dup", 0x2d1443ae5a1faa87, 0},
		{"nb", 0x440f8ddcf2b5e25e, 0}, // Go byte order would give 0x048ac8dbfac183d4
	}
	s := hashcache.NewKafka()
	for _, tc := range tests {
		t.Run(tc.topic, func(t *testing.T) {
			b, h := hashcache.TopicBytes(s, c.Topics[tc.topic], c)
			if uint64(h) != tc.want {
				t.Errorf("topic hash = %#016x, want %#016x", uint64(h), tc.want)
			}
			if tc.length != 0 && len(b) != tc.length {
				t.Errorf("input is %d bytes, want %d", len(b), tc.length)
			}
			if h2 := s.TopicHash(c.Topics[tc.topic], c); h2 != h {
				t.Errorf("second computation %#x differs from first %#x", h2, h)
			}
		})
	}
}

func TestKafkaTopicFooBytes(t *testing.T) {
	c := specCluster()
	want := strings.Join(strings.Fields(`
		00 efcdab8967452301 1032547698badcfe 66006f006f00 03000000 02000000
		00000000 05000000 7200610063006b003000 05000000 05000000 7200610063006b003100 05000000
		01000000 05000000 7200610063006b003100 05000000 05000000 7200610063006b003200 05000000`), "")
	b, _ := hashcache.TopicBytes(hashcache.NewKafka(), c.Topics["foo"], c)
	if got := hex.EncodeToString(b); got != want {
		t.Errorf("bytes\n got %s\nwant %s", got, want)
	}
}

func TestKafkaGroupVectors(t *testing.T) {
	c := specCluster()
	s := hashcache.NewKafka()
	foo := s.TopicHash(c.Topics["foo"], c)
	bar := s.TopicHash(c.Topics["bar"], c)
	tests := []struct {
		name string
		in   []hashcache.NamedHash
		want uint64
	}{
		{"empty", nil, 0},
		{"foo", []hashcache.NamedHash{{"foo", foo}}, 0xcd53200662bd02cc},
		{"foo,bar", []hashcache.NamedHash{{"foo", foo}, {"bar", bar}}, 0xbb141cecc1725893},
		{"bar,foo", []hashcache.NamedHash{{"bar", bar}, {"foo", foo}}, 0xbb141cecc1725893},
		{"UtilsTest literals", []hashcache.NamedHash{{"foo", 456}, {"bar", 123}}, 0x1493a6dd60ffc349},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := uint64(s.GroupHash(tc.in)); got != tc.want {
				t.Errorf("group hash = %#016x, want %#016x", got, tc.want)
			}
		})
	}

	// Through the cache: nonexistent topics are left out, duplicates count once.
	cache, err := hashcache.New(hashcache.Config{Scheme: hashcache.SchemeKafka})
	if err != nil {
		t.Fatal(err)
	}
	if got := uint64(cache.GroupHash(c, []string{"foo", "missing", "bar", "foo"})); got != 0xbb141cecc1725893 {
		t.Errorf("cache group hash = %#016x, want 0xbb141cecc1725893", got)
	}
	if got := cache.GroupHash(c, []string{"missing"}); got != 0 {
		t.Errorf("group of nonexistent topics = %#x, want 0", got)
	}
}

func TestMurmur3Bytes(t *testing.T) {
	c := specCluster()
	// foo: p0 racks rack0, rack1; p1 racks rack2, rack1 (sorted: rack1, rack2).
	want := strings.Join(strings.Fields(`
		01 0123456789abcdef fedcba9876543210 00000003 666f6f 00000002
		00000000 00000002 00000005 7261636b30 00000005 7261636b31
		00000001 00000002 00000005 7261636b31 00000005 7261636b32`), "")
	b, h := hashcache.TopicBytes(hashcache.NewMurmur3(), c.Topics["foo"], c)
	if got := hex.EncodeToString(b); got != want {
		t.Errorf("bytes\n got %s\nwant %s", got, want)
	}
	if want := int64(murmur3.Sum64(b)); h != want {
		t.Errorf("hash = %#x, want murmur3 of the bytes %#x", h, want)
	}
	// dup: racks b, a, a -> distinct a, b.
	want = strings.Join(strings.Fields(`
		01 0000000000000000 0000000000000001 00000003 647570 00000001
		00000000 00000002 00000001 61 00000001 62`), "")
	b, _ = hashcache.TopicBytes(hashcache.NewMurmur3(), c.Topics["dup"], c)
	if got := hex.EncodeToString(b); got != want {
		t.Errorf("dup bytes\n got %s\nwant %s", got, want)
	}
	// nb: bytewise order puts U+FFFD (EF BF BD) before U+1F600 (F0 …).
	b, _ = hashcache.TopicBytes(hashcache.NewMurmur3(), c.Topics["nb"], c)
	if i, j := strings.Index(string(b), "r\uFFFD"), strings.Index(string(b), "r\U0001F600"); i < 0 || j < 0 || i > j {
		t.Errorf("nb racks not in byte order: %x", b)
	}
}

func TestMurmur3Group(t *testing.T) {
	s := hashcache.NewMurmur3()
	tests := []struct {
		name string
		in   []hashcache.NamedHash
		want int64
	}{
		{"empty", nil, 0},
		{"one", []hashcache.NamedHash{{"a", 5}}, 5},
		{"wraps", []hashcache.NamedHash{{"a", 1<<63 - 1}, {"b", 2}}, -1<<63 + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := s.GroupHash(tc.in); got != tc.want {
				t.Errorf("group hash = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestNewScheme(t *testing.T) {
	for _, name := range []string{"", "murmur3", "kafka"} {
		s, err := hashcache.NewScheme(name)
		if err != nil {
			t.Fatalf("NewScheme(%q): %v", name, err)
		}
		if want := cmpOr(name, hashcache.DefaultScheme); s.Name() != want {
			t.Errorf("NewScheme(%q).Name() = %q, want %q", name, s.Name(), want)
		}
	}
	if _, err := hashcache.NewScheme("xxh3"); !errors.Is(err, hashcache.ErrUnknownScheme) {
		t.Errorf("NewScheme(xxh3) error = %v, want ErrUnknownScheme", err)
	}
	if err := (hashcache.Config{Scheme: "sha1"}).Validate(); err == nil {
		t.Error("Config.Validate accepted scheme sha1")
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
