package events

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// shape is what this package knows of one kind of JSON object in an event: the members
// it requires, the others it knows, and how to check them. Each known member is decoded
// into the Go field with its name, on its own, so that an error names it; members it does
// not know are never looked at (a later kraftwatch's additions; see the compatibility
// rule in doc.go), unless the object is closed. Decoding members one by one, rather than
// letting encoding/json skip unknown ones, also keeps an unknown "Topics" from being read
// as "topics": encoding/json matches names without regard to case.
type shape struct {
	required, optional []string
	// nullable members may be null; any other known member that is null is refused.
	nullable []string
	// closed objects refuse unknown members: v1 never adds to them.
	closed bool
	// hashes and topicIDs hold a Hash's decimal string or a topic id (when not null).
	hashes, topicIDs []string
	// objects and arrays are members holding an object, or an array of objects, of
	// the given shape.
	objects, arrays map[string]*shape
	// check, when set, checks the known members further, before they are decoded.
	check func(where string, m map[string]json.RawMessage) error

	fieldsOnce sync.Once
	fields     map[string][]int // the Go field of each JSON member name, by index
}

func (s *shape) knows(k string) bool {
	return slices.Contains(s.required, k) || slices.Contains(s.optional, k)
}

// members reads b as a JSON object.
func members(b []byte, where string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		if err == nil {
			err = errors.New("null")
		}
		return nil, fmt.Errorf("%s is not a JSON object: %v", where, err)
	}
	return m, nil
}

// read checks the object b, at where ("data.reasons[1]"), against s and decodes its known
// members into into, a pointer to a struct.
func (s *shape) read(b []byte, where string, into any) error {
	m, err := members(b, where)
	if err != nil {
		return err
	}
	return s.readMembers(m, where, reflect.ValueOf(into).Elem())
}

// readMembers is read for the members m of an object, into the struct v.
func (s *shape) readMembers(m map[string]json.RawMessage, where string, v reflect.Value) error {
	for _, k := range s.required {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("%s has no %q", where, k)
		}
	}
	known := slices.Concat(s.required, s.optional)
	if s.closed {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if !s.knows(k) {
				return fmt.Errorf("%s has a member %q: v1 events never add members to it", where, k)
			}
		}
	}
	for _, k := range known {
		if val, ok := m[k]; ok && isNull(val) && !slices.Contains(s.nullable, k) {
			return fmt.Errorf("%s.%s is null", where, k)
		}
	}
	for _, k := range s.hashes {
		if val, ok := m[k]; ok && !isNull(val) {
			var h string
			if json.Unmarshal(val, &h) != nil || !hashPattern.MatchString(h) {
				return fmt.Errorf("%s.%s %s is not a decimal string of a signed 64-bit hash", where, k, val)
			}
		}
	}
	for _, k := range s.topicIDs {
		if val, ok := m[k]; ok {
			var id string
			if json.Unmarshal(val, &id) != nil || !validTopicID(id) {
				return fmt.Errorf("%s.%s %s is not 22 characters of URL-safe base64", where, k, val)
			}
		}
	}
	if s.check != nil {
		if err := s.check(where, m); err != nil {
			return err
		}
	}
	s.fieldsOnce.Do(func() { s.fields = jsonFields(v.Type()) })
	for _, k := range known {
		val, ok := m[k]
		if !ok {
			continue
		}
		idx, ok := s.fields[k]
		if !ok {
			return fmt.Errorf("%s.%s: %s has no field for it", where, k, v.Type()) // a mistake in this package
		}
		f := v.FieldByIndex(idx)
		if err := decodeMember(val, where+"."+k, f, s.objects[k], s.arrays[k]); err != nil {
			return err
		}
	}
	return nil
}

// decodeMember decodes the member val, at where, into the field f: through obj or items
// when it holds an object or an array of objects of that shape.
func decodeMember(val json.RawMessage, where string, f reflect.Value, obj, items *shape) error {
	switch {
	case isNull(val):
		f.SetZero()
		return nil
	case obj != nil:
		if f.Kind() == reflect.Pointer {
			f.Set(reflect.New(f.Type().Elem()))
			f = f.Elem()
		}
		m, err := members(val, where)
		if err != nil {
			return err
		}
		return obj.readMembers(m, where, f)
	case items != nil:
		var raw []json.RawMessage
		if err := json.Unmarshal(val, &raw); err != nil {
			return fmt.Errorf("%s is not an array", where)
		}
		f.Set(reflect.MakeSlice(f.Type(), len(raw), len(raw)))
		for i, it := range raw {
			w := fmt.Sprintf("%s[%d]", where, i)
			m, err := members(it, w)
			if err != nil {
				return err
			}
			if err := items.readMembers(m, w, f.Index(i)); err != nil {
				return err
			}
		}
		return nil
	}
	if f.Kind() == reflect.Slice { // encoding/json reads a null item as the zero value
		var raw []json.RawMessage
		if json.Unmarshal(val, &raw) == nil {
			for i, it := range raw {
				if isNull(it) {
					return fmt.Errorf("%s[%d] is null", where, i)
				}
			}
		}
	}
	if err := json.Unmarshal(val, f.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s is %s, want %s", where, te.Value, jsonKind(te.Type))
		}
		return fmt.Errorf("%s: %v", where, err)
	}
	return nil
}

// jsonFields maps the JSON member names of struct type t (json tags, embedded structs
// included) to their fields.
func jsonFields(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "" && name != "-" {
			out[name] = f.Index
		}
	}
	return out
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// jsonKind names the JSON form of Go type t.
func jsonKind(t reflect.Type) string {
	if reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		return fmt.Sprintf("an integer that fits %s", t.Kind())
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

// offsetsPosition is the shape of a __consumer_offsets position. It is closed: a log
// position is a partition and an offset, and event ids are derived from it, so a
// position with more members would be another event version.
var offsetsPosition = &shape{required: []string{"partition", "offset"}, closed: true}
