package publish

import "github.com/kraftwatch/kraftwatch/events"

// MaxTokenLen is the longest group token EscapeToken returns, in bytes (events.MaxTokenLen).
const MaxTokenLen = events.MaxTokenLen

// SubjectParts is a subject taken apart by ParseSubject.
type SubjectParts = events.SubjectParts

// EscapeToken makes s (a group id or cluster id) into one NATS subject token: the
// reversible escape events.EscapeToken documents.
func EscapeToken(s string) string { return events.EscapeToken(s) }

// UnescapeToken is events.UnescapeToken, the inverse of EscapeToken.
func UnescapeToken(tok string) (string, error) { return events.UnescapeToken(tok) }

// Subject returns the subject of a group's events (events.Subject):
// <prefix>.<cluster token>.group.<group type>.<group token>.
func Subject(prefix, clusterID string, t GroupType, groupID string) string {
	return events.Subject(prefix, clusterID, t, groupID)
}

// ParseSubject takes apart a subject that Subject built (events.ParseSubject).
func ParseSubject(subject string) (SubjectParts, error) { return events.ParseSubject(subject) }

// safe reports whether byte c stands for itself in a token.
func safe(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// validPrefix reports whether p is one or more '.'-separated tokens of A-Z a-z 0-9 - _.
func validPrefix(p string) bool { return events.ValidPrefix(p) }
