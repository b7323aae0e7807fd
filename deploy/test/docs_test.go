package deploytest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOperationsHelmInstall runs the `helm install` of docs/operations.md as `helm
// template` (same chart, same flags): it renders, passes the checks every value set
// passes, and sets what the command says.
func TestOperationsHelmInstall(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```sh\n(helm install .*?)\n```").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/operations.md has no ```sh block starting with helm install")
	}
	args := shellWords(t, strings.ReplaceAll(string(m[1]), "\\\n", " "))
	if len(args) < 4 || args[0] != "helm" || args[1] != "install" || args[3] != "deploy/helm/kraftwatch" {
		t.Fatalf("not helm install NAME deploy/helm/kraftwatch ...: %q", args)
	}
	args[1], args[3] = "template", chart
	out, err := run(t, "helm", append(args[1:], "--kube-version", kubeVersion)...)
	if err != nil {
		t.Fatalf("%q: %v\n%s", args, err, out)
	}
	kubeconform(t, out, "ServiceMonitor")
	r := checkRendered(t, decodeObjects(t, out))
	if want := "registry.example.com/kraftwatch:0.1.0"; r.kw.Image != want {
		t.Errorf("image %s, want %s", r.kw.Image, want)
	}
	if got := strings.Split(r.env["KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS"], ","); len(got) != 2 {
		t.Errorf("controllers %q, want the two the command names", got)
	}
	for k, want := range map[string]string{"KRAFTWATCH_BOOTSTRAP_SERVERS": "kafka:9092", "KRAFTWATCH_NATS_URL": "nats://nats.nats:4222"} {
		if r.env[k] != want {
			t.Errorf("%s=%q, want %q", k, r.env[k], want)
		}
	}
}

// shellWords splits a command line as sh does for the quoting docs use: words
// separated by blanks, single quotes kept literally.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case !quoted && (r == ' ' || r == '\t' || r == '\n'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
			}
			inWord = false
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unterminated quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
