package metadata

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/kraftwatch/kraftwatch/internal/kbin"
)

// The text form of a record is one line: the type name and the fields that differ
// from the type's defaults, as Name=value pairs with Go field names:
//
//	TopicRecord Name=orders TopicID=9QXr3Xa7Q_yh6uQ8sAe0Lw
//	PartitionChangeRecord PartitionID=2 TopicID=9QXr3Xa7Q_yh6uQ8sAe0Lw ISR=1,2 Leader=2
//	RegisterBrokerRecord BrokerID=1 BrokerEpoch=10 Rack=rack-a EndPoints=[{Name=PLAINTEXT Host=h Port=9092}]
//
// Lists are comma-separated, or in brackets; [] is an empty list and null a null
// one (or a null string). Strings with spaces or punctuation are Go-quoted. Field
// names are matched ignoring case. UUIDs use Kafka's base64 text unless the caller
// supplies its own conversion (tests use short names).

// TextUUID converts UUIDs to and from text; nil uses Kafka's base64 form.
type TextUUID struct {
	Format func(UUID) string
	Parse  func(string) (UUID, error)
}

func (c *TextUUID) format(u UUID) string {
	if c != nil && c.Format != nil {
		return c.Format(u)
	}
	return u.String()
}

func (c *TextUUID) parse(s string) (UUID, error) {
	if c != nil && c.Parse != nil {
		return c.Parse(s)
	}
	return kbin.ParseUUID(s)
}

var uuidType = reflect.TypeFor[UUID]()

// FormatText returns the text form of rec.
func FormatText(rec Record, u *TextUUID) string {
	var b strings.Builder
	b.WriteString(rec.Type().String())
	v := reflect.ValueOf(rec).Elem()
	def := reflect.ValueOf(New(rec.Type())).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if reflect.DeepEqual(f.Interface(), def.Field(i).Interface()) {
			continue
		}
		b.WriteByte(' ')
		b.WriteString(v.Type().Field(i).Name)
		b.WriteByte('=')
		formatValue(&b, f, u, true)
	}
	return b.String()
}

func formatValue(b *strings.Builder, v reflect.Value, u *TextUUID, top bool) {
	switch {
	case v.Type() == uuidType:
		b.WriteString(u.format(v.Interface().(UUID)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		formatValue(b, v.Elem(), u, top)
	case reflect.String:
		s := v.String()
		if s == "" || s == "null" || strings.ContainsAny(s, " \t\"'=,[]{}\\") || !strconv.IsPrint(firstRune(s)) {
			b.WriteString(strconv.Quote(s))
		} else {
			b.WriteString(s)
		}
	case reflect.Bool:
		b.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint8, reflect.Uint16:
		b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float64:
		b.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case reflect.Slice:
		if v.IsNil() {
			b.WriteString("null")
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			b.WriteString("0x" + fmt.Sprintf("%x", v.Bytes()))
			return
		}
		b.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				b.WriteByte(',')
			}
			formatValue(b, v.Index(i), u, false)
		}
		b.WriteByte(']')
	case reflect.Struct:
		b.WriteByte('{')
		for i := range v.NumField() {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(v.Type().Field(i).Name)
			b.WriteByte('=')
			formatValue(b, v.Field(i), u, false)
		}
		b.WriteByte('}')
	}
}

func firstRune(s string) rune {
	for _, r := range s {
		return r
	}
	return ' '
}

// ParseText parses the text form of a record (see FormatText).
func ParseText(line string, u *TextUUID) (Record, error) {
	p := &textParser{s: strings.TrimSpace(line), u: u}
	name := p.word()
	t, ok := ParseRecordType(name)
	if !ok {
		return nil, fmt.Errorf("metadata: unknown record type %q", name)
	}
	rec := New(t)
	if err := p.fields(reflect.ValueOf(rec).Elem(), 0); err != nil {
		return nil, fmt.Errorf("metadata: %s: %w", name, err)
	}
	return rec, nil
}

type textParser struct {
	s   string
	pos int
	u   *TextUUID
}

func (p *textParser) skipSpace() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// word reads up to a space, '=', ',' or a bracket.
func (p *textParser) word() string {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.s) && !strings.ContainsRune(" \t=,[]{}", rune(p.s[p.pos])) {
		p.pos++
	}
	return p.s[start:p.pos]
}

// fields reads Name=value pairs into the struct v until the end (or a '}' when
// close is '}').
func (p *textParser) fields(v reflect.Value, close byte) error {
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			if close != 0 {
				return fmt.Errorf("missing %q", close)
			}
			return nil
		}
		if close != 0 && p.s[p.pos] == close {
			p.pos++
			return nil
		}
		name := p.word()
		if p.pos >= len(p.s) || p.s[p.pos] != '=' {
			return fmt.Errorf("want Name=value at %q", p.s[min(p.pos, len(p.s)):])
		}
		p.pos++
		f := v.FieldByNameFunc(func(n string) bool { return strings.EqualFold(n, name) })
		if !f.IsValid() {
			return fmt.Errorf("no field %q", name)
		}
		if err := p.value(f, true); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
}

// scalar reads a quoted string or a word.
func (p *textParser) scalar() (string, error) {
	p.skipSpace()
	if p.pos < len(p.s) && p.s[p.pos] == '"' {
		end := p.pos + 1
		for end < len(p.s) && p.s[end] != '"' {
			if p.s[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(p.s) {
			return "", fmt.Errorf("unterminated string")
		}
		s, err := strconv.Unquote(p.s[p.pos : end+1])
		p.pos = end + 1
		return s, err
	}
	return p.word(), nil
}

func (p *textParser) peek(c byte) bool {
	p.skipSpace()
	return p.pos < len(p.s) && p.s[p.pos] == c
}

// value reads one value into v. At the top level a list may omit its brackets.
func (p *textParser) value(v reflect.Value, top bool) error {
	if v.Type() == uuidType {
		s, err := p.scalar()
		if err != nil {
			return err
		}
		u, err := p.u.parse(s)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(u))
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if strings.HasPrefix(p.s[p.pos:], "null") {
			p.pos += 4
			v.SetZero()
			return nil
		}
		e := reflect.New(v.Type().Elem())
		if err := p.value(e.Elem(), top); err != nil {
			return err
		}
		v.Set(e)
		return nil
	case reflect.Slice:
		if strings.HasPrefix(p.s[p.pos:], "null") {
			p.pos += 4
			v.SetZero()
			return nil
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			s := p.word()
			var b []byte
			if _, err := fmt.Sscanf(strings.TrimPrefix(s, "0x"), "%x", &b); err != nil && s != "0x" {
				return err
			}
			if b == nil {
				b = []byte{}
			}
			v.SetBytes(b)
			return nil
		}
		bracket := p.peek('[')
		if bracket {
			p.pos++
		} else if !top {
			return fmt.Errorf("want '[' at %q", p.s[p.pos:])
		}
		s := reflect.MakeSlice(v.Type(), 0, 4)
		for {
			if bracket && p.peek(']') {
				p.pos++
				break
			}
			e := reflect.New(v.Type().Elem()).Elem()
			if err := p.value(e, false); err != nil {
				return err
			}
			s = reflect.Append(s, e)
			if p.pos < len(p.s) && p.s[p.pos] == ',' {
				p.pos++
				continue
			}
			if bracket {
				if !p.peek(']') {
					return fmt.Errorf("want ']' at %q", p.s[p.pos:])
				}
				continue
			}
			break
		}
		v.Set(s)
		return nil
	case reflect.Struct:
		if !p.peek('{') {
			return fmt.Errorf("want '{' at %q", p.s[p.pos:])
		}
		p.pos++
		return p.fields(v, '}')
	}
	s, err := p.scalar()
	if err != nil {
		return err
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		v.SetBool(b)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return err
		}
		v.SetInt(n)
	case reflect.Uint8, reflect.Uint16:
		n, err := strconv.ParseUint(s, 10, v.Type().Bits())
		if err != nil {
			return err
		}
		v.SetUint(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		v.SetFloat(f)
	default:
		return fmt.Errorf("cannot parse a %s", v.Type())
	}
	return nil
}

// ShortUUIDs is the TextUUID of test scripts: a name of 1 to 16 printable bytes stands
// for the UUID holding those bytes (zero-padded) and "0" for the zero UUID; any other
// UUID keeps Kafka's base64 form.
var ShortUUIDs = &TextUUID{Format: FormatShortUUID, Parse: parseShortUUID}

func parseShortUUID(s string) (UUID, error) {
	if len(s) == 22 {
		return kbin.ParseUUID(s)
	}
	if s == "0" {
		return UUID{}, nil
	}
	if len(s) == 0 || len(s) > 16 {
		return UUID{}, fmt.Errorf("bad uuid name %q", s)
	}
	var u UUID
	copy(u[:], s)
	return u, nil
}

// FormatShortUUID gives u's short name (see ShortUUIDs), or Kafka's form when it has none.
func FormatShortUUID(u UUID) string {
	n := 0
	for n < 16 && u[n] != 0 {
		if u[n] < '!' || u[n] > '~' {
			return u.String()
		}
		n++
	}
	for _, b := range u[n:] {
		if b != 0 {
			return u.String()
		}
	}
	if n == 0 {
		return "0"
	}
	return string(u[:n])
}

var uuidToken = regexp.MustCompile(`[A-Za-z0-9_-]+`)

// ShortenUUIDs replaces Kafka's form of every UUID in line by its short name.
func ShortenUUIDs(line string) string {
	return uuidToken.ReplaceAllStringFunc(line, func(w string) string {
		if len(w) != 22 {
			return w
		}
		if u, err := kbin.ParseUUID(w); err == nil && u.String() == w {
			return FormatShortUUID(u)
		}
		return w
	})
}
