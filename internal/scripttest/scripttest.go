// Package scripttest runs script tests in the style of cockroachdb/datadriven. A
// script is a text file of cases:
//
//	command arg=value ...
//	input lines
//	----
//	expected output
//	<blank line>
//
// A case's input is every line up to "----", its expected output every line after
// it up to a blank line or the end of the file. Blank lines and lines starting with
// '#' between cases are comments. What a command means is up to the caller's
// callback, which returns the output lines; Run compares them with the expected
// ones, or, when asked to update, rewrites the expected output in place and leaves
// every other line of the file as it was.
//
// The package registers no flags: test binaries commonly define -update for their
// golden files too, so the caller passes the value of its own flag to Run.
// It depends on nothing but the standard library.
package scripttest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Case is one case of a script.
type Case struct {
	Pos   string   // file:line of the command line
	Cmd   string   // the first word of the command line
	Args  []string // the other words of the command line
	Input []string // the lines between the command line and "----"
	Want  []string // the expected output: the lines after "----" up to a blank line

	sep int // index in the file's lines of the "----" line
}

// Script is a parsed script file.
type Script struct {
	Path  string
	Cases []Case

	lines []string // the file's lines, without the final newline
}

// Parse reads and parses the script at path. A command without a "----" line is
// an error.
func Parse(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &Script{Path: path, lines: strings.Split(strings.TrimRight(string(data), "\n"), "\n")}
	lines := s.lines
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := Case{Pos: fmt.Sprintf("%s:%d", path, i+1)}
		f := strings.Fields(l)
		c.Cmd, c.Args = f[0], f[1:]
		for i++; i < len(lines) && lines[i] != "----"; i++ {
			c.Input = append(c.Input, lines[i])
		}
		if i >= len(lines) {
			return nil, errors.New(c.Pos + ": no ---- line")
		}
		c.sep = i
		for i++; i < len(lines) && lines[i] != ""; i++ {
			c.Want = append(c.Want, lines[i])
		}
		s.Cases = append(s.Cases, c)
	}
	return s, nil
}

// Rewrite returns the script's text with the expected output of case i replaced
// by got[i]; every other line is kept as it was. The text ends with one newline.
func (s *Script) Rewrite(got [][]string) string {
	var out []string
	next := 0 // next line of the file to copy
	for i, c := range s.Cases {
		out = append(out, s.lines[next:c.sep+1]...)
		out = append(out, got[i]...)
		next = c.sep + 1 + len(c.Want)
	}
	out = append(out, s.lines[next:]...)
	return strings.Join(out, "\n") + "\n"
}

// Files returns the scripts (*.txt) in dir; none is a test failure.
func Files(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in %s: %v", dir, err)
	}
	return files
}

// Run parses the script at path and runs its cases in order through run. Without
// update, an output that differs from the expected one is a test error; with
// update, the file is rewritten with the outputs instead (see Script.Rewrite).
func Run(t testing.TB, path string, update bool, run func(c Case) []string) {
	t.Helper()
	s, err := Parse(path)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]string, len(s.Cases))
	for i, c := range s.Cases {
		got[i] = run(c)
		if !update && !slices.Equal(got[i], c.Want) {
			t.Errorf("%s: %s\n got:\n%s\nwant:\n%s", c.Pos, c.Cmd, strings.Join(got[i], "\n"), strings.Join(c.Want, "\n"))
		}
	}
	if update {
		if err := os.WriteFile(path, []byte(s.Rewrite(got)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
