package events

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// MaxTokenLen is the longest group token EscapeToken returns, in bytes. Group ids whose
// escape is longer are shortened with a hash suffix (see EscapeToken). A whole subject is
// then at most len(prefix) + len(cluster token) + 23 + MaxTokenLen bytes, far below
// nats-server's 4 KiB control line (the PUB line carries the subject), and short enough
// for subscribers, logs and JetStream's per-subject index.
const MaxTokenLen = 128

// hashSuffixLen is the number of hex digits of SHA-256 in a hashed token (128 bits).
const hashSuffixLen = 32

// hashedPrefixMax is the longest escaped prefix kept in a hashed token.
const hashedPrefixMax = MaxTokenLen - 1 - hashSuffixLen

// EscapeToken makes s (a group id or cluster id, any bytes, possibly empty) into one NATS
// subject token. The escape:
//
//   - Bytes A-Z, a-z, 0-9, '-' and '_' stand for themselves: the characters NATS
//     recommends, so typical ids ("orders-app", "billing_v2") stay readable.
//   - Every other byte is written "%XX" with two upper-case hex digits: '.', '*', '>',
//     whitespace, control characters, '%' itself, '$', '~' and each byte of a multi-byte
//     UTF-8 sequence (or of invalid UTF-8). "my.app" becomes "my%2Eapp" and "é" "%C3%A9".
//   - The empty id becomes "%", which no other id produces (a '%' is otherwise always
//     followed by two hex digits).
//   - An escape longer than MaxTokenLen becomes its first at most 95 bytes (cut at an
//     escape boundary), '~', and the first 32 hex digits of SHA-256 of the raw id. '~' is
//     never produced by the escape itself, so hashed and plain tokens cannot collide, and
//     two long ids share a token only if they share the 128-bit hash.
//
// (Enqueue refuses group ids that are not valid UTF-8, which JSON cannot carry; Kafka's
// own ids, Java strings, always are. EscapeToken itself takes any bytes.)
//
// Tokens therefore hold only A-Z a-z 0-9 - _ % ~, are never empty and are at most
// MaxTokenLen bytes. The escape is a bijection onto its canonical tokens for ids whose
// escape fits; UnescapeToken inverts it. A hashed token cannot be inverted alone: the raw
// id always travels in the event's data (group_id), and EscapeToken(group_id) gives the
// token back.
func EscapeToken(s string) string {
	if s == "" {
		return "%"
	}
	n := escapedLen(s)
	if n == len(s) && n <= MaxTokenLen {
		return s
	}
	if n <= MaxTokenLen {
		return string(appendEscaped(make([]byte, 0, n), s, n))
	}
	b := appendEscaped(make([]byte, 0, MaxTokenLen), s, hashedPrefixMax)
	b = append(b, '~')
	sum := sha256.Sum256([]byte(s))
	return string(hex.AppendEncode(b, sum[:hashSuffixLen/2]))
}

// safe reports whether byte c stands for itself in a token.
func safe(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

func escapedLen(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if safe(s[i]) {
			n++
		} else {
			n += 3
		}
	}
	return n
}

// appendEscaped appends the escape of s to b, stopping before the escape of a byte that
// would take the appended length over limit.
func appendEscaped(b []byte, s string, limit int) []byte {
	const hexDigits = "0123456789ABCDEF"
	start := len(b)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if safe(c) {
			if len(b)-start+1 > limit {
				break
			}
			b = append(b, c)
			continue
		}
		if len(b)-start+3 > limit {
			break
		}
		b = append(b, '%', hexDigits[c>>4], hexDigits[c&15])
	}
	return b
}

// UnescapeToken returns the id EscapeToken turned into tok. It accepts only canonical
// tokens (upper-case hex, no escaped safe bytes, "%" alone for the empty id), so
// EscapeToken(id) == tok whenever it returns a nil error. For a hashed token (one holding
// '~') it returns the decoded prefix of the id and an error wrapping ErrHashedToken: the
// full id is in the event's data.
func UnescapeToken(tok string) (string, error) {
	if tok == "" {
		return "", fmt.Errorf("%w: empty token", ErrBadToken)
	}
	if tok == "%" {
		return "", nil
	}
	body, hashed := tok, false
	if i := strings.IndexByte(tok, '~'); i >= 0 {
		body, hashed = tok[:i], true
		sum := tok[i+1:]
		if len(sum) != hashSuffixLen || !isLowerHex(sum) {
			return "", fmt.Errorf("%w: %q: hash suffix must be %d lower-case hex digits", ErrBadToken, tok, hashSuffixLen)
		}
		if len(body) > hashedPrefixMax {
			return "", fmt.Errorf("%w: %q: hashed prefix longer than %d bytes", ErrBadToken, tok, hashedPrefixMax)
		}
	} else if len(tok) > MaxTokenLen {
		return "", fmt.Errorf("%w: %d bytes, longer than %d", ErrBadToken, len(tok), MaxTokenLen)
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case safe(c):
			out = append(out, c)
		case c == '%':
			if i+2 >= len(body) {
				return "", fmt.Errorf("%w: %q: '%%' at byte %d needs two hex digits", ErrBadToken, tok, i)
			}
			hi, ok1 := upperHex(body[i+1])
			lo, ok2 := upperHex(body[i+2])
			if !ok1 || !ok2 {
				return "", fmt.Errorf("%w: %q: bad escape %q at byte %d (want upper-case hex)", ErrBadToken, tok, body[i:i+3], i)
			}
			d := hi<<4 | lo
			if safe(d) {
				return "", fmt.Errorf("%w: %q: escape %q at byte %d stands for a byte that is not escaped", ErrBadToken, tok, body[i:i+3], i)
			}
			out = append(out, d)
			i += 2
		default:
			return "", fmt.Errorf("%w: %q: byte %#x at %d is not allowed", ErrBadToken, tok, c, i)
		}
	}
	if hashed {
		return string(out), fmt.Errorf("%w: %q", ErrHashedToken, tok)
	}
	return string(out), nil
}

func upperHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Subject returns the subject of a group's events:
// <prefix>.<cluster token>.group.<group type>.<group token>, both tokens from EscapeToken.
// prefix is taken as given (Config.Validate checks it).
func Subject(prefix, clusterID string, t GroupType, groupID string) string {
	return prefix + "." + EscapeToken(clusterID) + ".group." + t.String() + "." + EscapeToken(groupID)
}

// SubjectParts is a subject taken apart by ParseSubject.
type SubjectParts struct {
	Prefix       string // one or more tokens
	ClusterToken string // EscapeToken of the cluster id
	GroupType    GroupType
	GroupToken   string // EscapeToken of the group id
}

// ParseSubject takes apart a subject that Subject built. The group id is
// UnescapeToken(parts.GroupToken) unless that token is hashed.
func ParseSubject(subject string) (SubjectParts, error) {
	toks := strings.Split(subject, ".")
	n := len(toks)
	if n < 5 || toks[n-3] != "group" {
		return SubjectParts{}, fmt.Errorf("%w: %q is not <prefix>.<cluster>.group.<type>.<group>", ErrBadSubject, subject)
	}
	t, err := ParseGroupType(toks[n-2])
	if err != nil {
		return SubjectParts{}, fmt.Errorf("%w: %q: %w", ErrBadSubject, subject, err)
	}
	for _, tok := range toks {
		if tok == "" {
			return SubjectParts{}, fmt.Errorf("%w: %q has an empty token", ErrBadSubject, subject)
		}
	}
	return SubjectParts{
		Prefix:       strings.Join(toks[:n-4], "."),
		ClusterToken: toks[n-4],
		GroupType:    t,
		GroupToken:   toks[n-1],
	}, nil
}

// ValidPrefix reports whether p is a valid subject prefix: one or more '.'-separated
// tokens of A-Z a-z 0-9 - _.
func ValidPrefix(p string) bool {
	if p == "" {
		return false
	}
	for _, tok := range strings.Split(p, ".") {
		if tok == "" {
			return false
		}
		for i := 0; i < len(tok); i++ {
			if !safe(tok[i]) {
				return false
			}
		}
	}
	return true
}

// DefaultPrefix is the subject prefix kraftwatch publishes under unless configured
// otherwise (KRAFTWATCH_SUBJECT_PREFIX).
const DefaultPrefix = "kraftwatch"

// InternalPrefix is the first token of the subjects kraftwatch publishes to in
// ModeJetStream: "_kraftwatch.<prefix>.<cluster token>.group.<group type>.<group token>".
// The stream captures them, stores each event under the public subject (the same without
// "_kraftwatch.") and republishes only what it stores to that public subject, so core
// subscribers of "<prefix>.>" see each stored event once and never a refused or
// de-duplicated attempt. NATS permissions must let kraftwatch publish to
// "_kraftwatch.<prefix>.>"; subscribers need only "<prefix>.>".
const InternalPrefix = "_kraftwatch"
