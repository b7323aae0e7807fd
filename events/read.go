package events

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// reader decodes one event in a single pass over its tokens, with a jsontext.Decoder
// reading the input in place (no copy). jsontext checks the syntax strictly (RFC 8259,
// valid UTF-8); reader checks what the schemas say of each known member as it reads it
// (and that none is given twice), and never looks into the members it does not know.
// A reader is not safe for concurrent use: Decode takes one from a pool.
type reader struct {
	in   bytes.Buffer
	dec  *jsontext.Decoder
	path []pathSeg // where the reader is, for errors: "data.reasons[1].kind"
	base int       // errors name path[base:]
	buf  []byte    // scratch for unquoting strings with escapes
	// clusterID and groupID are the ids the event's source and subject give, strings
	// the data's ids can share.
	clusterID, groupID string
	// names holds the first topic names and ids of the event, which its reasons and
	// topics repeat: each is one string.
	names []string
	// Scratch for the items of arrays of objects, copied out at their exact length.
	reasons []Reason
	topics  []CoveredTopic
	causes  []RebalanceCause
}

// pathSeg is a member name, or an array index when name is "".
type pathSeg struct {
	name  string
	index int
}

// allowDuplicateNames leaves the check for a member given twice to the reader, which
// refuses known members given twice (which of the two would a subscriber read?) and
// costs nothing for the others, which it skips: jsontext's check of every name is a
// fifth of the time of a Decode.
var allowDuplicateNames = jsontext.AllowDuplicateNames(true)

var readers = sync.Pool{New: func() any {
	r := &reader{}
	r.dec = jsontext.NewDecoder(&r.in)
	return r
}}

// getReader returns a reader at the start of b, root the name of its value in errors.
func getReader(b []byte, root string) *reader {
	r := readers.Get().(*reader)
	r.reset(b, root)
	return r
}

func (r *reader) reset(b []byte, root string) {
	r.in = *bytes.NewBuffer(b)
	r.dec.Reset(&r.in, allowDuplicateNames)
	r.path = append(r.path[:0], pathSeg{name: root})
	r.base = 0
	clear(r.names)
	r.names = r.names[:0]
	r.clusterID, r.groupID = "", ""
}

// release returns r to the pool, holding no reference to the input.
func (r *reader) release() {
	r.reset(nil, "")
	readers.Put(r)
}

func (r *reader) push(name string) { r.path = append(r.path, pathSeg{name: name}) }
func (r *reader) pushIndex(i int)  { r.path = append(r.path, pathSeg{index: i}) }
func (r *reader) pop()             { r.path = r.path[:len(r.path)-1] }

// where is the path of the value being read.
func (r *reader) where() string {
	var sb strings.Builder
	for i, s := range r.path[r.base:] {
		switch {
		case s.name == "":
			fmt.Fprintf(&sb, "[%d]", s.index)
		case i > 0:
			sb.WriteString("." + s.name)
		default:
			sb.WriteString(s.name)
		}
	}
	return sb.String()
}

// errorf returns an error saying where, then format ("data.epoch" + " is null").
func (r *reader) errorf(format string, args ...any) error {
	return fmt.Errorf("%s"+format, append([]any{r.where()}, args...)...)
}

// syntaxError is an error of the decoder: the event is not JSON.
type syntaxError struct{ error }

func (r *reader) syntax(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return syntaxError{fmt.Errorf("event is not a JSON object: %w", err)}
}

// kindName names the JSON type of a value starting with kind k, as errors say it.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "bool"
	case '[':
		return "array"
	case '{':
		return "object"
	case 'n':
		return "null"
	}
	return "nothing"
}

// shape is what this package knows of one kind of JSON object in an event: its known
// members (the first required of them required), which of them may be null, and whether
// it is closed (refuses unknown members: v1 never adds to it). Members it does not know
// are skipped unread, as the compatibility rule in doc.go says; names are matched
// exactly (encoding/json would read an unknown "Topics" as "topics").
type shape struct {
	names    []string
	required int
	nullable uint64 // bit i: names[i] may be null
	closed   bool
}

// index returns the index of name in s.names, or -1.
func (s *shape) index(name []byte) int {
	for i, n := range s.names {
		if string(name) == n {
			return i
		}
	}
	return -1
}

// object reads the object at the decoder, at the current path, calling member(i) for
// each member names[i] of s that is not null, with its name pushed on the path and the
// decoder at its value, which member must read whole. It returns the set of members
// seen (bit i: names[i]).
func (r *reader) object(s *shape, member func(i int) error) (uint64, error) {
	if k := r.dec.PeekKind(); k != '{' {
		if k == 0 {
			_, err := r.dec.ReadToken()
			return 0, r.syntax(err)
		}
		return 0, r.errorf(" is not a JSON object: it is %s", kindName(k))
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return 0, r.syntax(err)
	}
	var seen uint64
	for {
		k := r.dec.PeekKind()
		if k == '}' {
			break
		}
		if k != '"' {
			_, err := r.dec.ReadToken()
			return 0, r.syntax(err)
		}
		name, err := r.dec.ReadValue()
		if err != nil {
			return 0, r.syntax(err)
		}
		i := s.index(name[1 : len(name)-1]) // a name with escapes is rare: unquote it only then
		if i < 0 && bytes.IndexByte(name, '\\') >= 0 {
			i = s.index(r.unquoted(name))
		}
		if i < 0 {
			if s.closed {
				return 0, r.errorf(" has a member %q: v1 events never add members to it", r.unquoted(name))
			}
			if err := r.dec.SkipValue(); err != nil {
				return 0, r.syntax(err)
			}
			continue
		}
		r.push(s.names[i])
		if seen&(1<<i) != 0 {
			return 0, r.errorf(" is given twice")
		}
		seen |= 1 << i
		if r.dec.PeekKind() == 'n' {
			if s.nullable&(1<<i) == 0 {
				return 0, r.errorf(" is null")
			}
			err = r.dec.SkipValue()
		} else {
			err = member(i)
		}
		if err != nil {
			return 0, err
		}
		r.pop()
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return 0, r.syntax(err)
	}
	for i := range s.required {
		if seen&(1<<i) == 0 {
			return 0, r.errorf(" has no %q", s.names[i])
		}
	}
	return seen, nil
}

// array reads the array at the decoder, calling item(i) for each item, which is never
// null, with its index pushed on the path and the decoder at it; item must read it
// whole.
func (r *reader) array(item func(i int) error) error {
	if k := r.dec.PeekKind(); k != '[' {
		if k == 0 {
			_, err := r.dec.ReadToken()
			return r.syntax(err)
		}
		return r.errorf(" is not an array")
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return r.syntax(err)
	}
	for i := 0; ; i++ {
		k := r.dec.PeekKind()
		if k == ']' {
			break
		}
		if k == 0 {
			_, err := r.dec.ReadToken()
			return r.syntax(err)
		}
		r.pushIndex(i)
		if k == 'n' {
			return r.errorf(" is null")
		}
		if err := item(i); err != nil {
			return err
		}
		r.pop()
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return r.syntax(err)
	}
	return nil
}

// items reads an array of objects, each with item, into the scratch slice *scratch,
// and returns a copy of exactly their number (empty, not nil, for an empty array, as
// encoding/json gives it): one allocation, where appending would make one per growth.
func items[T any](r *reader, scratch *[]T, item func(*T) error) ([]T, error) {
	s := (*scratch)[:0]
	err := r.array(func(int) error {
		var zero T
		s = append(s, zero)
		return item(&s[len(s)-1])
	})
	out := append(make([]T, 0, len(s)), s...)
	clear(s) // the pooled reader keeps no strings of the event
	*scratch = s[:0]
	return out, err
}

// value reads the next value whole.
func (r *reader) value() (jsontext.Value, error) {
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, r.syntax(err)
	}
	return v, nil
}

// unquoted returns the characters of the string v, valid until the next read.
func (r *reader) unquoted(v jsontext.Value) []byte {
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return s
	}
	var err error
	r.buf, err = jsontext.AppendUnquote(r.buf[:0], v)
	if err != nil { // the decoder has checked the string already
		return s
	}
	return r.buf
}

// stringBytes reads a string value's characters, valid until the next read.
func (r *reader) stringBytes() ([]byte, error) {
	v, err := r.value()
	if err != nil {
		return nil, err
	}
	return r.stringOf(v)
}

// stringOf returns the characters of the string v, valid until the next read.
func (r *reader) stringOf(v jsontext.Value) ([]byte, error) {
	if v.Kind() != '"' {
		return nil, r.errorf(" is %s, want a string", kindName(v.Kind()))
	}
	return r.unquoted(v), nil
}

// str reads a string into dst.
func (r *reader) str(dst *string, known ...string) error {
	v, err := r.value()
	if err != nil {
		return err
	}
	return r.strOf(v, dst, known...)
}

// strOf sets dst to the string v; known, when it holds it, gives the string without
// allocating ("1.0", "application/json", the cluster id of the event's source).
func (r *reader) strOf(v jsontext.Value, dst *string, known ...string) error {
	b, err := r.stringOf(v)
	if err != nil {
		return err
	}
	for _, k := range known {
		if string(b) == k {
			*dst = k
			return nil
		}
	}
	*dst = string(b)
	return nil
}

// strs reads an array of strings.
func (r *reader) strs(dst *[]string) error {
	*dst = []string{} // encoding/json gives a present empty array as empty, not nil
	return r.array(func(int) error {
		var s string
		if err := r.str(&s); err != nil {
			return err
		}
		*dst = append(*dst, s)
		return nil
	})
}

// boolean reads true or false.
func (r *reader) boolean(dst *bool) error {
	v, err := r.value()
	if err != nil {
		return err
	}
	switch v.Kind() {
	case 't':
		*dst = true
	case 'f':
		*dst = false
	default:
		return r.errorf(" is %s, want a boolean", kindName(v.Kind()))
	}
	return nil
}

// integer reads a JSON number that is an integer of bits bits.
func (r *reader) integer(bits int) (int64, error) {
	v, err := r.value()
	if err != nil {
		return 0, err
	}
	if v.Kind() != '0' {
		return 0, r.errorf(" is %s, want an integer that fits int%d", kindName(v.Kind()), bits)
	}
	n, ok := parseInt(v, bits, true)
	if !ok {
		return 0, r.errorf(" is number %s, want an integer that fits int%d", v, bits)
	}
	return n, nil
}

func (r *reader) int32(dst *int32) error {
	n, err := r.integer(32)
	*dst = int32(n)
	return err
}

func (r *reader) int64(dst *int64) error {
	n, err := r.integer(64)
	*dst = n
	return err
}

// atLeast reads an int of bits bits that is min or more; what says what it is.
func (r *reader) atLeast(bits int, min int64, what string) (int64, error) {
	v, err := r.value()
	if err != nil {
		return 0, err
	}
	n, ok := parseInt(v, bits, true)
	if v.Kind() != '0' || !ok || n < min {
		return 0, r.errorf(" %s is not %s", v, what)
	}
	return n, nil
}

// parseInt parses b, the decimal form of an integer of bits bits: digits, optionally
// after a '-', without leading zeros; "-0" only when minusZero.
func parseInt(b []byte, bits int, minusZero bool) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 1 && b[0] == '0' || len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	limit := uint64(1) << (bits - 1) // |min|; max is limit-1
	switch {
	case neg && u == 0 && !minusZero:
		return 0, false
	case neg && u <= limit:
		return int64(-u), true
	case !neg && u < limit:
		return int64(u), true
	}
	return 0, false
}

// hash reads a Hash's decimal string (schema: ^(0|-?[1-9][0-9]{0,18})$, in range).
func (r *reader) hash(dst *Hash) error {
	v, err := r.value()
	if err != nil {
		return err
	}
	var n int64
	ok := v.Kind() == '"'
	if ok {
		n, ok = parseInt(r.unquoted(v), 64, false)
	}
	if !ok {
		return r.errorf(" %s is not a decimal string of a signed 64-bit hash", v)
	}
	*dst = Hash(n)
	return nil
}

// topicID reads a topic id: 22 characters of URL-safe base64.
func (r *reader) topicID(dst *string) error {
	v, err := r.value()
	if err != nil {
		return err
	}
	var b []byte
	if v.Kind() == '"' {
		b = r.unquoted(v)
	}
	if !validTopicID(string(b)) {
		return r.errorf(" %s is not 22 characters of URL-safe base64", v)
	}
	*dst = r.intern(b)
	return nil
}

// name reads a topic name.
func (r *reader) name(dst *string) error {
	b, err := r.stringBytes()
	if err != nil {
		return err
	}
	*dst = r.intern(b)
	return nil
}

// maxNames bounds r.names, which intern searches one by one.
const maxNames = 16

// intern returns b as a string, the same string for the same bytes among the first
// maxNames.
func (r *reader) intern(b []byte) string {
	for _, s := range r.names {
		if string(b) == s {
			return s
		}
	}
	s := string(b)
	if len(r.names) < maxNames {
		r.names = append(r.names, s)
	}
	return s
}

// time reads an RFC 3339 time, as encoding/json reads a time.Time.
func (r *reader) time(dst *time.Time) error {
	v, err := r.value()
	if err != nil {
		return err
	}
	return r.timeOf(v, dst)
}

// timeOf sets dst to the time v.
func (r *reader) timeOf(v jsontext.Value, dst *time.Time) error {
	b, err := r.stringOf(v)
	if err != nil {
		return err
	}
	if err := dst.UnmarshalText(b); err != nil {
		return r.errorf(": %q is not an RFC 3339 time: %v", b, err)
	}
	return nil
}

// enum reads a string that is one of names, returning its index; parse gives the error
// for another string.
func (r *reader) enum(names []string, parse func(string) error) (int, error) {
	b, err := r.stringBytes()
	if err != nil {
		return 0, err
	}
	for i, n := range names {
		if string(b) == n {
			return i, nil
		}
	}
	return 0, r.errorf(": %v", parse(string(b)))
}

// end checks that nothing but white space follows the value read.
func (r *reader) end() error {
	if k := r.dec.PeekKind(); k != 0 {
		return r.syntax(fmt.Errorf("more JSON (%s) after it", kindName(k)))
	}
	if _, err := r.dec.ReadToken(); err != io.EOF {
		return r.syntax(err)
	}
	return nil
}
