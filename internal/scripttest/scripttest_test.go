package scripttest_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kraftwatch/kraftwatch/internal/scripttest"
)

var update = flag.Bool("update", false, "rewrite the expected output of testdata/*.txt")

// run is the callback of the tests: upper, args and count (see testdata/echo.txt).
func run(t *testing.T) func(c scripttest.Case) []string {
	return func(c scripttest.Case) []string {
		switch c.Cmd {
		case "upper":
			var out []string
			for _, l := range c.Input {
				out = append(out, strings.ToUpper(l))
			}
			return out
		case "args":
			return c.Args
		case "count":
			return []string{strconv.Itoa(len(c.Input))}
		}
		t.Fatalf("%s: unknown command %q", c.Pos, c.Cmd)
		return nil
	}
}

func TestScript(t *testing.T) {
	scripttest.Run(t, filepath.Join("testdata", "echo.txt"), *update, run(t))
}

func TestParse(t *testing.T) {
	s, err := scripttest.Parse(filepath.Join("testdata", "echo.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Cases {
		got = append(got, fmt.Sprintf("%s %s %q %q %q", filepath.Base(c.Pos), c.Cmd, c.Args, c.Input, c.Want))
	}
	want := []string{
		`echo.txt:4 upper [] ["hello" "world"] ["HELLO" "WORLD"]`,
		`echo.txt:14 args ["a=1" "b"] [] ["a=1" "b"]`,
		`echo.txt:20 count [] ["# not a comment" "x"] ["2"]`,
		`echo.txt:27 args [] [] []`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("cases:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseNoSeparator(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.txt")
	if err := os.WriteFile(path, []byte("# comment\nupper\nhello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := scripttest.Parse(path)
	if err == nil || !strings.Contains(err.Error(), "bad.txt:2: no ---- line") {
		t.Fatalf("err = %v, want bad.txt:2: no ---- line", err)
	}
}

// recorder is a testing.TB that records Errorf instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestUpdate checks that a wrong or missing expected output is an error without
// update, and that update rewrites only the expected output: comments, blank lines
// and input are kept byte for byte, and the rewritten file then passes.
func TestUpdate(t *testing.T) {
	const stale = "# header\n\n\nupper\n  indented\n----\nWRONG\nLINES\n\n  \n# between\nargs x y\n----\n\n\ncount\n----\n\n# tail\n"
	const fixed = "# header\n\n\nupper\n  indented\n----\n  INDENTED\n\n  \n# between\nargs x y\n----\nx\ny\n\n\ncount\n----\n0\n\n# tail\n"
	path := filepath.Join(t.TempDir(), "s.txt")
	if err := os.WriteFile(path, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}

	r := &recorder{TB: t}
	scripttest.Run(r, path, false, run(t))
	if len(r.errs) != 3 {
		t.Errorf("without update: %d errors, want 3:\n%s", len(r.errs), strings.Join(r.errs, "\n"))
	}
	if data, _ := os.ReadFile(path); string(data) != stale {
		t.Errorf("without update the file changed:\n%s", data)
	}

	scripttest.Run(t, path, true, run(t))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != fixed {
		t.Errorf("rewritten:\n%q\nwant:\n%q", data, fixed)
	}

	r = &recorder{TB: t}
	scripttest.Run(r, path, false, run(t))
	if len(r.errs) != 0 {
		t.Errorf("after update: %s", strings.Join(r.errs, "\n"))
	}
}
