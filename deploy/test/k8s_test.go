package deploytest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// Just the parts of the Kubernetes objects the checks read.

type object struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace"`
		Labels    map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec yaml.Node `yaml:"spec"`
	raw  []byte
}

type podSpec struct {
	SecurityContext              securityContext `yaml:"securityContext"`
	AutomountServiceAccountToken *bool           `yaml:"automountServiceAccountToken"`
	Containers                   []container     `yaml:"containers"`
	Volumes                      []volume        `yaml:"volumes"`
}

type securityContext struct {
	RunAsNonRoot             *bool `yaml:"runAsNonRoot"`
	RunAsUser                *int  `yaml:"runAsUser"`
	ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
	AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
	Capabilities             struct {
		Drop []string `yaml:"drop"`
	} `yaml:"capabilities"`
}

type container struct {
	Name  string `yaml:"name"`
	Image string `yaml:"image"`
	Args  []string
	Env   []struct {
		Name      string     `yaml:"name"`
		Value     *string    `yaml:"value"`
		ValueFrom *yaml.Node `yaml:"valueFrom"`
	} `yaml:"env"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	StartupProbe    *probe          `yaml:"startupProbe"`
	LivenessProbe   *probe          `yaml:"livenessProbe"`
	ReadinessProbe  *probe          `yaml:"readinessProbe"`
	SecurityContext securityContext `yaml:"securityContext"`
	Resources       struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port any    `yaml:"port"`
	} `yaml:"httpGet"`
}

type volume struct {
	Name   string `yaml:"name"`
	Secret *struct {
		SecretName string `yaml:"secretName"`
		Items      []struct {
			Key  string `yaml:"key"`
			Path string `yaml:"path"`
		} `yaml:"items"`
	} `yaml:"secret"`
	EmptyDir              *yaml.Node `yaml:"emptyDir"`
	PersistentVolumeClaim *yaml.Node `yaml:"persistentVolumeClaim"`
}

func (c container) env() map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.Value != nil:
			m[e.Name] = *e.Value
		case e.ValueFrom != nil:
			m[e.Name] = "value-from-secret"
		}
	}
	return m
}

// port resolves a probe's or Service's port (a number or a container port's name).
func (c container) port(p any) (int, bool) {
	switch v := p.(type) {
	case int:
		return v, true
	case string:
		for _, cp := range c.Ports {
			if cp.Name == v {
				return cp.ContainerPort, true
			}
		}
		if n, err := strconv.Atoi(v); err == nil {
			return n, true
		}
	}
	return 0, false
}

func decodeObjects(t *testing.T, manifests string) []object {
	t.Helper()
	var objs []object
	dec := yaml.NewDecoder(strings.NewReader(manifests))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("rendered manifests: %v", err)
		}
		if len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
			continue
		}
		var o object
		if err := n.Decode(&o); err != nil {
			t.Fatal(err)
		}
		o.raw, _ = yaml.Marshal(&n)
		objs = append(objs, o)
	}
	return objs
}

func decodeSpec(t *testing.T, o object, v any) {
	t.Helper()
	if err := o.Spec.Decode(v); err != nil {
		t.Fatalf("%s %s: %v", o.Kind, o.Metadata.Name, err)
	}
}

// kubeconform validates manifests against the vendored strict schemas; kinds without a
// schema there fail unless listed in skip.
func kubeconform(t *testing.T, manifests string, skip ...string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "manifests.yaml")
	if err := os.WriteFile(f, []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-strict", "-summary", "-output", "text",
		"-schema-location", "schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json"}
	if len(skip) > 0 {
		args = append(args, "-skip", strings.Join(skip, ","))
	}
	out, err := run(t, "kubeconform", append(args, f)...)
	if err != nil {
		t.Errorf("kubeconform: %v\n%s", err, out)
	} else if !strings.Contains(out, "Invalid: 0, Errors: 0") {
		t.Errorf("kubeconform:\n%s", out)
	}
}

// checkContainer checks a kraftwatch container against the program: its settings exist
// and pass kraftwatch's own validation, its probes hit served endpoints on the port it
// listens on, it runs non-root on a read-only root filesystem with limits, and every
// file setting points into a mounted volume that holds that file.
func checkContainer(t *testing.T, where string, c container, volumes []volume) int {
	t.Helper()
	env := c.env()
	seen := map[string]bool{}
	for _, e := range c.Env {
		if seen[e.Name] {
			t.Errorf("%s sets %s twice", where, e.Name)
		}
		seen[e.Name] = true
	}
	for name := range env {
		if strings.HasPrefix(name, "KRAFTWATCH_") && !settings[name] {
			t.Errorf("%s sets %s, which is not a kraftwatch setting (kraftwatch --help)", where, name)
		}
	}
	if _, ok := env["KRAFTWATCH_EMBEDDED_NATS_PORT"]; ok {
		t.Errorf("%s sets KRAFTWATCH_EMBEDDED_NATS_PORT: replicas need one external NATS", where)
	}
	if env["KRAFTWATCH_NATS_URL"] == "" {
		t.Errorf("%s: no KRAFTWATCH_NATS_URL: each pod would embed its own NATS", where)
	}

	// HTTP: the listen port, the container port, the probes.
	_, portStr, err := net.SplitHostPort(valueOr(env, "KRAFTWATCH_HTTP_ADDR", ":8080"))
	if err != nil {
		t.Fatalf("%s: KRAFTWATCH_HTTP_ADDR: %v", where, err)
	}
	port, _ := strconv.Atoi(portStr)
	if !hasContainerPort(c, port) {
		t.Errorf("%s: kraftwatch listens on %d, which is not a container port %v", where, port, c.Ports)
	}
	for _, p := range []struct {
		name  string
		probe *probe
		want  string
	}{{"startupProbe", c.StartupProbe, "/livez"}, {"livenessProbe", c.LivenessProbe, "/livez"}, {"readinessProbe", c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil && p.name == "startupProbe" {
			continue // optional: /livez answers from the start
		}
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s: no HTTP %s", where, p.name)
			continue
		}
		if got, ok := c.port(p.probe.HTTPGet.Port); !ok || got != port {
			t.Errorf("%s: %s port %v is not kraftwatch's port %d", where, p.name, p.probe.HTTPGet.Port, port)
		}
		if !served(p.probe.HTTPGet.Path) {
			t.Errorf("%s: %s path %s is not served by kraftwatch", where, p.name, p.probe.HTTPGet.Path)
		}
		if p.probe.HTTPGet.Path != p.want {
			t.Errorf("%s: %s on %s, want %s", where, p.name, p.probe.HTTPGet.Path, p.want)
		}
	}

	// Non-root, read-only root filesystem, no privilege escalation, limits.
	sc := c.SecurityContext
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("%s: root filesystem not read-only", where)
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("%s: allowPrivilegeEscalation not false", where)
	}
	if len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("%s: capabilities.drop %v, want [ALL]", where, sc.Capabilities.Drop)
	}
	if c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" || c.Resources.Requests["cpu"] == "" {
		t.Errorf("%s: resources %+v lack cpu request or memory request/limit", where, c.Resources)
	}

	// Every mount has a volume; every file setting is a file some Secret volume holds.
	vols := map[string]volume{}
	for _, v := range volumes {
		vols[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		if _, ok := vols[m.Name]; !ok {
			t.Errorf("%s mounts volume %s, which the pod does not have", where, m.Name)
		}
	}
	for name, value := range env {
		if !strings.HasSuffix(name, "_FILE") {
			continue
		}
		if !fileInSecret(c, vols, value) {
			t.Errorf("%s: %s=%s is not a key of a Secret mounted there", where, name, value)
		}
	}
	validateSettings(t, where, env)
	return port
}

func valueOr(env map[string]string, k, def string) string {
	if v, ok := env[k]; ok {
		return v
	}
	return def
}

func hasContainerPort(c container, port int) bool {
	for _, p := range c.Ports {
		if p.ContainerPort == port {
			return true
		}
	}
	return false
}

func fileInSecret(c container, vols map[string]volume, file string) bool {
	for _, m := range c.VolumeMounts {
		if path.Dir(file) != path.Clean(m.MountPath) {
			continue
		}
		s := vols[m.Name].Secret
		if s == nil {
			return false
		}
		if len(s.Items) == 0 {
			return true // every key of the Secret
		}
		for _, it := range s.Items {
			if it.Path == path.Base(file) {
				return true
			}
		}
	}
	return false
}

// validateSettings runs kraftwatch's own validation on env: file settings point at
// stand-in files whose contents kraftwatch accepts (testdata/standin: a self-signed
// certificate valid until 2126 and its key, a NATS credentials file; the in-container
// paths are checked by fileInSecret), the metadata dir
// at an empty directory, and one deliberate bad value (KRAFTWATCH_EMBEDDED_NATS_PORT=0,
// which the chart never sets) makes kraftwatch exit 2 after validating, so every other
// error it reports is the chart's.
func validateSettings(t *testing.T, where string, env map[string]string) {
	t.Helper()
	for _, p := range settingProblems(t, where, env) {
		t.Errorf("%s: kraftwatch rejects the rendered settings: %s", where, p)
	}
}

// settingProblems is what kraftwatch's validation says of env (as validateSettings
// runs it), one line per bad value.
func settingProblems(t *testing.T, where string, env map[string]string) []string {
	t.Helper()
	dir := t.TempDir()
	environ := []string{"PATH=" + os.Getenv("PATH"), "KRAFTWATCH_EMBEDDED_NATS_PORT=0"}
	for k, v := range env {
		if !strings.HasPrefix(k, "KRAFTWATCH_") {
			continue
		}
		switch {
		case strings.HasSuffix(k, "_FILE"):
			content := []byte("stand-in\n") // a password
			for suffix, standin := range map[string]string{"_CA_FILE": "cert.pem", "_CERT_FILE": "cert.pem",
				"_KEY_FILE": "key.pem", "_CREDS_FILE": "user.creds"} {
				if strings.HasSuffix(k, suffix) {
					b, err := os.ReadFile(filepath.Join("testdata", "standin", standin))
					if err != nil {
						t.Fatal(err)
					}
					content = b
				}
			}
			f := filepath.Join(dir, strings.ToLower(k))
			if err := os.WriteFile(f, content, 0o600); err != nil {
				t.Fatal(err)
			}
			v = f
		case k == "KRAFTWATCH_METADATA_LOG_DIR":
			v = dir
		}
		environ = append(environ, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, kwBinary, "run")
	cmd.Env = environ
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("%s: kraftwatch run with the rendered settings: %v, want exit 2 for the deliberate bad value\n%s", where, err, stderr.String())
	}
	var problems []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(line, "  KRAFTWATCH_") && !strings.HasPrefix(line, "  KRAFTWATCH_EMBEDDED_NATS_PORT:") {
			problems = append(problems, strings.TrimSpace(line))
		}
	}
	if !strings.Contains(stderr.String(), "KRAFTWATCH_EMBEDDED_NATS_PORT") {
		t.Errorf("%s: kraftwatch did not report the deliberate bad value:\n%s", where, stderr.String())
	}
	return problems
}

// hostPorts splits host:port,... into ports.
func hostPorts(t *testing.T, list string) []int {
	t.Helper()
	var ports []int
	for _, hp := range strings.Split(list, ",") {
		hp = strings.TrimSpace(hp)
		if u, err := url.Parse(hp); err == nil && u.Host != "" {
			hp = u.Host
		}
		if hp == "" {
			continue
		}
		_, p, err := net.SplitHostPort(hp)
		if err != nil {
			t.Errorf("%q: %v", hp, err)
			continue
		}
		n, _ := strconv.Atoi(p)
		ports = append(ports, n)
	}
	return ports
}

func subset(sel, labels map[string]string) bool {
	if len(sel) == 0 {
		return false
	}
	for k, v := range sel {
		if labels[k] != v {
			return false
		}
	}
	return true
}
