package events_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kraftwatch/kraftwatch/events"
)

func TestEscapeToken(t *testing.T) {
	long := strings.Repeat("a.", 300)
	for _, tc := range []struct {
		name, id, token string
	}{
		{"plain", "orders-app_v2", "orders-app_v2"},
		{"empty", "", "%"},
		{"dot", "my.app", "my%2Eapp"},
		{"star", "*", "%2A"},
		{"gt", ">", "%3E"},
		{"wildcards", "a.*.>", "a%2E%2A%2E%3E"},
		{"space", "my group", "my%20group"},
		{"tab newline", "a\tb\nc", "a%09b%0Ac"},
		{"percent", "100%", "100%25"},
		{"percent escape lookalike", "%2E", "%252E"},
		{"tilde", "~a", "%7Ea"},
		{"dollar", "$SYS", "%24SYS"},
		{"nul", "\x00", "%00"},
		{"del", "\x7f", "%7F"},
		{"unicode", "é", "%C3%A9"},
		{"emoji", "grp🚀", "grp%F0%9F%9A%80"},
		{"invalid utf8", "\xff\xfe", "%FF%FE"},
		{"fits exactly", strings.Repeat("x", 125) + ".", strings.Repeat("x", 125) + "%2E"},
		{"long", long, strings.Repeat("a%2E", 23) + "a~"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := events.EscapeToken(tc.id)
			checkToken(t, tok)
			if tc.name == "long" {
				if !strings.HasPrefix(tok, tc.token) || len(tok) != len(tc.token)+32 {
					t.Fatalf("EscapeToken(long) = %q, want %q + 32 hex digits", tok, tc.token)
				}
				got, err := events.UnescapeToken(tok)
				if !errors.Is(err, events.ErrHashedToken) || !strings.HasPrefix(tc.id, got) || got == "" {
					t.Fatalf("UnescapeToken(%q) = %q, %v; want a prefix of the id and ErrHashedToken", tok, got, err)
				}
				return
			}
			if tok != tc.token {
				t.Fatalf("EscapeToken(%q) = %q, want %q", tc.id, tok, tc.token)
			}
			got, err := events.UnescapeToken(tok)
			if err != nil || got != tc.id {
				t.Fatalf("UnescapeToken(%q) = %q, %v; want %q", tok, got, err, tc.id)
			}
		})
	}
}

func TestEscapeTokenLongIDsDiffer(t *testing.T) {
	// Ids longer than a token that share a long prefix still get distinct tokens.
	base := strings.Repeat("g", 200)
	seen := map[string]string{}
	for _, id := range []string{base, base + "1", base + "2", base + ".", strings.Repeat("g", 32767)} {
		tok := events.EscapeToken(id)
		checkToken(t, tok)
		if other, ok := seen[tok]; ok {
			t.Fatalf("ids of %d and %d bytes share token %q", len(id), len(other), tok)
		}
		seen[tok] = id
	}
}

func TestUnescapeTokenRejects(t *testing.T) {
	for _, tok := range []string{
		"", "a.b", "a*", ">", "a b", "%2", "%2e", "%41", "%ZZ", "é", "a~b",
		"a~" + strings.Repeat("0", 31), "a~" + strings.Repeat("A", 32), strings.Repeat("a", events.MaxTokenLen+1),
		strings.Repeat("a", 96) + "~" + strings.Repeat("0", 32), "%%",
	} {
		if got, err := events.UnescapeToken(tok); !errors.Is(err, events.ErrBadToken) {
			t.Errorf("UnescapeToken(%q) = %q, %v; want ErrBadToken", tok, got, err)
		}
	}
}

func TestSubject(t *testing.T) {
	s := events.Subject("acme.kw", "MkU3OEVBNTcwNTJENDM2Qk", events.ShareGroup, "my.group")
	if want := "acme.kw.MkU3OEVBNTcwNTJENDM2Qk.group.share.my%2Egroup"; s != want {
		t.Fatalf("Subject = %q, want %q", s, want)
	}
	parts, err := events.ParseSubject(s)
	if err != nil {
		t.Fatal(err)
	}
	want := events.SubjectParts{Prefix: "acme.kw", ClusterToken: "MkU3OEVBNTcwNTJENDM2Qk", GroupType: events.ShareGroup, GroupToken: "my%2Egroup"}
	if parts != want {
		t.Fatalf("ParseSubject = %+v, want %+v", parts, want)
	}
	for _, bad := range []string{"kw.c.group.consumer", "kw.c.groups.consumer.g", "kw.c.group.weird.g", "kw..group.consumer.g"} {
		if _, err := events.ParseSubject(bad); !errors.Is(err, events.ErrBadSubject) {
			t.Errorf("ParseSubject(%q) = %v, want ErrBadSubject", bad, err)
		}
	}
}

// checkToken fails unless tok is a valid NATS subject token of the promised alphabet.
func checkToken(t *testing.T, tok string) {
	t.Helper()
	if tok == "" || len(tok) > events.MaxTokenLen {
		t.Fatalf("token %q: length %d, want 1..%d", tok, len(tok), events.MaxTokenLen)
	}
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_%~", c) >= 0) {
			t.Fatalf("token %q: byte %#x at %d", tok, c, i)
		}
	}
}

func FuzzEscapeToken(f *testing.F) {
	for _, s := range []string{"", "a", "my.app", "*", ">", " ", "%", "%2E", "~", "é", "\xff",
		strings.Repeat("a.", 100), strings.Repeat("é", 50), strings.Repeat("x", 128)} {
		f.Add(s, s+"x")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ta, tb := events.EscapeToken(a), events.EscapeToken(b)
		checkToken(t, ta)
		if a != b && ta == tb {
			t.Fatalf("ids %q and %q share token %q", a, b, ta)
		}
		got, err := events.UnescapeToken(ta)
		switch {
		case strings.Contains(ta, "~"):
			if !errors.Is(err, events.ErrHashedToken) || !strings.HasPrefix(a, got) {
				t.Fatalf("UnescapeToken(%q) = %q, %v; want a prefix of %q and ErrHashedToken", ta, got, err, a)
			}
		case err != nil || got != a:
			t.Fatalf("UnescapeToken(EscapeToken(%q)) = %q, %v", a, got, err)
		}
		if utf8.ValidString(a) && !strings.Contains(ta, "~") && len(ta) < len(a) {
			t.Fatalf("token %q shorter than id %q", ta, a)
		}
	})
}

func FuzzUnescapeToken(f *testing.F) {
	for _, s := range []string{"%", "a", "%2E", "%2e", "%41", "a~0123456789abcdef0123456789abcdef", "%%", "~"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		id, err := events.UnescapeToken(tok)
		if err != nil {
			return
		}
		// Only canonical tokens are accepted: the escape is a bijection.
		if back := events.EscapeToken(id); back != tok {
			t.Fatalf("UnescapeToken(%q) = %q, which escapes to %q", tok, id, back)
		}
	})
}
