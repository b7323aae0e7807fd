package deploytest

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const chart = "../helm/kraftwatch"

// required are the values the chart cannot guess.
var required = []string{
	"controller.bootstrapServers=controller-0.kafka:9093,controller-1.kafka:9093",
	"kafka.bootstrapServers=kafka-0.kafka:9092",
	"nats.url=nats://nats.nats:4222",
}

// valueSets render the chart in the ways it is meant to be used.
var valueSets = []struct {
	name   string
	set    []string
	files  []string
	values string // a values file's content
	checks func(t *testing.T, r rendered)
}{
	{name: "defaults", set: required, checks: func(t *testing.T, r rendered) {
		if r.replicas != 2 {
			t.Errorf("default replicas %d, want 2", r.replicas)
		}
		if r.env["KRAFTWATCH_NATS_MODE"] != "jetstream" {
			t.Errorf("default NATS mode %q, want jetstream (de-duplication)", r.env["KRAFTWATCH_NATS_MODE"])
		}
		if v, ok := r.env["KRAFTWATCH_EVENTS_STREAM"]; ok {
			t.Errorf("KRAFTWATCH_EVENTS_STREAM=%q by default, want it unset (the events stream)", v)
		}
		if r.count("ServiceMonitor")+r.count("NetworkPolicy") != 0 {
			t.Error("ServiceMonitor or NetworkPolicy rendered without being asked for")
		}
	}},
	{name: "strimzi", files: []string{"../helm/kraftwatch/examples/strimzi.yaml"}, checks: checkStrimzi},
	{name: "everything", set: append(slices.Clone(required),
		"replicaCount=3", "httpPort=9100", "service.port=80", "clusterId=MkU3OEVBNTcwNTJENDM2Qk",
		"controller.sasl.mechanism=SCRAM-SHA-512", "controller.sasl.username=kraftwatch", "controller.sasl.passwordSecret.name=kraftwatch-controller",
		"controller.tls.enabled=true", "controller.tls.caSecret.name=controller-ca",
		"kafka.sasl.mechanism=PLAIN", "kafka.sasl.username=kraftwatch", "kafka.sasl.passwordSecret.name=kraftwatch-kafka", "kafka.sasl.passwordSecret.key=pw",
		"kafka.tls.caSecret.name=kafka-ca", "kafka.tls.certSecret.name=kafka-client",
		"nats.credsSecret.name=nats-creds", "nats.tls.caSecret.name=nats-ca", "nats.tls.certSecret.name=nats-client",
		"nats.user=kw", "nats.passwordSecret.name=nats-pw",
		"stream.name=KW", "stream.events=none", "stream.maxAge=168h", "hashScheme=kafka", "groups.exclude=_.*", "log.level=debug",
		"serviceMonitor.enabled=true", "networkPolicy.enabled=true",
		"networkPolicy.controllerIngress.enabled=true", "networkPolicy.controllerIngress.namespace=kafka",
		"networkPolicy.controllerIngress.podSelector.app=kafka-controller", "networkPolicy.controllerIngress.port=9093",
	), values: "extraEnv:\n  - {name: KRAFTWATCH_KAFKA_TLS, value: \"true\"}\n", checks: func(t *testing.T, r rendered) {
		if r.env["KRAFTWATCH_KAFKA_TLS"] != "true" {
			t.Error("extraEnv not rendered")
		}
		if r.env["KRAFTWATCH_EVENTS_STREAM"] != "none" {
			t.Errorf("stream.events: KRAFTWATCH_EVENTS_STREAM %q, want none", r.env["KRAFTWATCH_EVENTS_STREAM"])
		}
		if r.replicas != 3 {
			t.Errorf("replicas %d", r.replicas)
		}
		if r.count("ServiceMonitor") != 1 || r.count("NetworkPolicy") != 2 {
			t.Errorf("want a ServiceMonitor and two NetworkPolicies, got %v", r.kinds())
		}
	}},
	{name: "one replica, core NATS", set: append(slices.Clone(required), "replicaCount=1", "nats.mode=core", "podDisruptionBudget.enabled=true"),
		checks: func(t *testing.T, r rendered) {
			if r.replicas != 1 || r.env["KRAFTWATCH_NATS_MODE"] != "core" {
				t.Errorf("replicas %d, mode %s", r.replicas, r.env["KRAFTWATCH_NATS_MODE"])
			}
		}},
}

// escapeSet escapes the commas of a --set value (Helm splits --set at commas).
func escapeSet(kv string) string {
	k, v, _ := strings.Cut(kv, "=")
	return k + "=" + strings.ReplaceAll(v, ",", `\,`)
}

type rendered struct {
	objects  []object
	pod      podSpec
	kw       container
	env      map[string]string
	replicas int
	port     int
}

func (r rendered) count(kind string) int {
	n := 0
	for _, o := range r.objects {
		if o.Kind == kind {
			n++
		}
	}
	return n
}

func (r rendered) kinds() []string {
	var k []string
	for _, o := range r.objects {
		k = append(k, o.Kind+"/"+o.Metadata.Name)
	}
	return k
}

func (r rendered) get(kind string) []object {
	var out []object
	for _, o := range r.objects {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func helmTemplate(t *testing.T, set, files []string) (string, error) {
	t.Helper()
	args := []string{"template", "kw", chart, "--namespace", "kraftwatch", "--kube-version", kubeVersion}
	for _, s := range set {
		args = append(args, "--set", escapeSet(s))
	}
	for _, f := range files {
		args = append(args, "-f", f)
	}
	return run(t, "helm", args...)
}

func TestChartLint(t *testing.T) {
	args := []string{"lint", "--strict", chart, "--kube-version", kubeVersion}
	for _, s := range required {
		args = append(args, "--set", escapeSet(s))
	}
	if out, err := run(t, "helm", args...); err != nil {
		t.Errorf("helm lint: %v\n%s", err, out)
	}
}

func TestChart(t *testing.T) {
	for _, vs := range valueSets {
		t.Run(vs.name, func(t *testing.T) {
			files := vs.files
			if vs.values != "" {
				f := filepath.Join(t.TempDir(), "values.yaml")
				if err := os.WriteFile(f, []byte(vs.values), 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
			out, err := helmTemplate(t, vs.set, files)
			if err != nil {
				t.Fatalf("helm template: %v\n%s", err, out)
			}
			kubeconform(t, out, "ServiceMonitor")
			r := checkRendered(t, decodeObjects(t, out))
			if vs.checks != nil {
				vs.checks(t, r)
			}
		})
	}
}

// checkRendered checks one rendering of the chart: the Deployment's pod against the
// program, and the Service, ServiceMonitor, PodDisruptionBudget and NetworkPolicies
// against the pod.
func checkRendered(t *testing.T, objs []object) rendered {
	t.Helper()
	r := rendered{objects: objs}
	deps := r.get("Deployment")
	if len(deps) != 1 {
		t.Fatalf("want one Deployment, got %v", r.kinds())
	}
	var dep struct {
		Replicas int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
	}
	decodeSpec(t, deps[0], &dep)
	r.replicas, r.pod = dep.Replicas, dep.Template.Spec
	podLabels := dep.Template.Metadata.Labels
	if !subset(dep.Selector.MatchLabels, podLabels) {
		t.Errorf("Deployment selector %v does not select its pods %v", dep.Selector.MatchLabels, podLabels)
	}
	if len(r.pod.Containers) != 1 {
		t.Fatalf("want one container, got %d", len(r.pod.Containers))
	}
	r.kw = r.pod.Containers[0]
	r.env = r.kw.env()
	psc := r.pod.SecurityContext
	if psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
		t.Errorf("pod securityContext %+v: want runAsNonRoot and a non-zero runAsUser", psc)
	}
	if r.env["KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS"] == "" || r.env["KRAFTWATCH_METADATA_LOG_DIR"] != "" {
		t.Errorf("the Deployment is not in network mode: %v", r.env)
	}
	r.port = checkContainer(t, "Deployment", r.kw, r.pod.Volumes)

	// Service -> pods and port; ServiceMonitor -> Service port and /metrics.
	svcs := r.get("Service")
	if len(svcs) != 1 {
		t.Fatalf("want one Service, got %v", r.kinds())
	}
	var svc struct {
		Selector map[string]string `yaml:"selector"`
		Ports    []struct {
			Name       string `yaml:"name"`
			Port       int    `yaml:"port"`
			TargetPort any    `yaml:"targetPort"`
		} `yaml:"ports"`
	}
	decodeSpec(t, svcs[0], &svc)
	if !subset(svc.Selector, podLabels) {
		t.Errorf("Service selector %v does not select the pods %v", svc.Selector, podLabels)
	}
	if len(svc.Ports) != 1 {
		t.Fatalf("Service ports %v", svc.Ports)
	}
	if p, ok := r.kw.port(svc.Ports[0].TargetPort); !ok || p != r.port {
		t.Errorf("Service targetPort %v is not kraftwatch's port %d", svc.Ports[0].TargetPort, r.port)
	}
	for _, sm := range r.get("ServiceMonitor") {
		var spec struct {
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			NamespaceSelector struct {
				MatchNames []string `yaml:"matchNames"`
			} `yaml:"namespaceSelector"`
			Endpoints []struct {
				Port string `yaml:"port"`
				Path string `yaml:"path"`
			} `yaml:"endpoints"`
		}
		decodeSpec(t, sm, &spec)
		if sm.APIVersion != "monitoring.coreos.com/v1" {
			t.Errorf("ServiceMonitor apiVersion %s", sm.APIVersion)
		}
		if !subset(spec.Selector.MatchLabels, svcs[0].Metadata.Labels) {
			t.Errorf("ServiceMonitor selector %v does not select the Service %v", spec.Selector.MatchLabels, svcs[0].Metadata.Labels)
		}
		if !slices.Contains(spec.NamespaceSelector.MatchNames, svcs[0].Metadata.Namespace) {
			t.Errorf("ServiceMonitor namespaces %v lack the Service's %s", spec.NamespaceSelector.MatchNames, svcs[0].Metadata.Namespace)
		}
		if len(spec.Endpoints) != 1 || spec.Endpoints[0].Port != svc.Ports[0].Name || !served(spec.Endpoints[0].Path) ||
			!strings.Contains(httpBody[spec.Endpoints[0].Path], "kraftwatch_ready") {
			t.Errorf("ServiceMonitor endpoints %+v: want the Service's port %q and kraftwatch's /metrics", spec.Endpoints, svc.Ports[0].Name)
		}
	}

	// The PodDisruptionBudget keeps one replica through voluntary disruptions.
	pdbs := r.get("PodDisruptionBudget")
	if len(pdbs) != 1 {
		t.Fatalf("want one PodDisruptionBudget, got %v", r.kinds())
	}
	var pdb struct {
		MinAvailable   *int `yaml:"minAvailable"`
		MaxUnavailable *int `yaml:"maxUnavailable"`
		Selector       struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
	}
	decodeSpec(t, pdbs[0], &pdb)
	if !subset(pdb.Selector.MatchLabels, podLabels) {
		t.Errorf("PodDisruptionBudget selector %v does not select the pods", pdb.Selector.MatchLabels)
	}
	switch {
	case r.replicas > 1 && (pdb.MinAvailable == nil || *pdb.MinAvailable < 1 || *pdb.MinAvailable >= r.replicas):
		t.Errorf("%d replicas, PodDisruptionBudget minAvailable %v: want at least 1 and fewer than the replicas", r.replicas, pdb.MinAvailable)
	case r.replicas == 1 && (pdb.MaxUnavailable == nil || *pdb.MaxUnavailable != 1):
		t.Errorf("one replica: PodDisruptionBudget %+v would block node drains; want maxUnavailable 1", pdb)
	}

	for _, np := range r.get("NetworkPolicy") {
		checkNetworkPolicy(t, r, np, podLabels)
	}
	return r
}

func checkNetworkPolicy(t *testing.T, r rendered, np object, podLabels map[string]string) {
	t.Helper()
	var spec struct {
		PodSelector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"podSelector"`
		Ingress []struct {
			Ports []struct {
				Port any `yaml:"port"`
			} `yaml:"ports"`
			From []struct {
				PodSelector *struct {
					MatchLabels map[string]string `yaml:"matchLabels"`
				} `yaml:"podSelector"`
			} `yaml:"from"`
		} `yaml:"ingress"`
		Egress []struct {
			Ports []struct {
				Port any `yaml:"port"`
			} `yaml:"ports"`
		} `yaml:"egress"`
	}
	decodeSpec(t, np, &spec)
	if subset(spec.PodSelector.MatchLabels, podLabels) {
		// kraftwatch's own policy: the HTTP port in, every port it dials out.
		var in []int
		for _, ing := range spec.Ingress {
			for _, p := range ing.Ports {
				if n, ok := r.kw.port(p.Port); ok {
					in = append(in, n)
				}
			}
		}
		if !slices.Contains(in, r.port) {
			t.Errorf("NetworkPolicy %s does not admit kraftwatch's port %d (%v)", np.Metadata.Name, r.port, in)
		}
		var out []int
		for _, eg := range spec.Egress {
			for _, p := range eg.Ports {
				if n, ok := p.Port.(int); ok {
					out = append(out, n)
				}
			}
		}
		for _, k := range []string{"KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS", "KRAFTWATCH_BOOTSTRAP_SERVERS", "KRAFTWATCH_NATS_URL"} {
			for _, p := range hostPorts(t, r.env[k]) {
				if !slices.Contains(out, p) {
					t.Errorf("NetworkPolicy %s lets no traffic out to port %d of %s (egress ports %v)", np.Metadata.Name, p, k, out)
				}
			}
		}
		return
	}
	// The controllers' policy: kraftwatch's pods in, on the controller listener's port.
	ports := hostPorts(t, r.env["KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS"])
	ok := false
	for _, ing := range spec.Ingress {
		for _, from := range ing.From {
			if from.PodSelector == nil || !subset(from.PodSelector.MatchLabels, podLabels) {
				continue
			}
			for _, p := range ing.Ports {
				if n, isInt := p.Port.(int); isInt && slices.Contains(ports, n) {
					ok = true
				}
			}
		}
	}
	if !ok {
		t.Errorf("NetworkPolicy %s does not admit kraftwatch's pods to the controller port %v", np.Metadata.Name, ports)
	}
}

// TestChartRefuses checks that values that cannot work fail to render, with a message
// that says why.
func TestChartRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		set  []string
		want string
	}{
		{"no controllers", required[1:], "controller.bootstrapServers is required"},
		{"no NATS", required[:2], "nats.url is required"},
		{"core NATS with replicas", append(slices.Clone(required), "nats.mode=core"), "nats.mode core publishes every event once per replica"},
		{"SASL without a password", append(slices.Clone(required), "kafka.sasl.mechanism=PLAIN", "kafka.sasl.username=u"), "kafka.sasl.passwordSecret.name is required"},
		{"unknown hash scheme", append(slices.Clone(required), "hashScheme=sha1"), "hashScheme"},
		{"not a KRAFTWATCH_ setting", append(slices.Clone(required), "extraEnv[0].name=JAVA_OPTS", "extraEnv[0].value=x"), "extraEnv"},
		{"a setting that is not a string", append(slices.Clone(required), "extraEnv[0].name=KRAFTWATCH_KAFKA_TLS", "extraEnv[0].value=true"), "/extraEnv/0/value"},
		{"a typo in a value", append(slices.Clone(required), "replicas=3"), "replicas"},
		{"controllers not host:port", []string{"controller.bootstrapServers=controller-0", required[1], required[2]}, "/controller/bootstrapServers"},
		{"controller ingress without selector", append(slices.Clone(required), "networkPolicy.controllerIngress.enabled=true"), "podSelector is required"},
		{"a misspelt extraEnv name", append(slices.Clone(required), "extraEnv[0].name=KRAFTWATCH_STALLAFTER", "extraEnv[0].value=1m"), "/extraEnv/0/name"},
		{"extraEnv repeating a variable the chart sets", append(slices.Clone(required), "extraEnv[0].name=KRAFTWATCH_STALL_AFTER", "extraEnv[0].value=1m"), "extraEnv: KRAFTWATCH_STALL_AFTER is set twice"},
		{"extraEnv naming a variable twice", append(slices.Clone(required), "extraEnv[0].name=KRAFTWATCH_GROUP_METRICS", "extraEnv[0].value=a.*",
			"extraEnv[1].name=KRAFTWATCH_GROUP_METRICS", "extraEnv[1].value=b.*"), "extraEnv: KRAFTWATCH_GROUP_METRICS is set twice"},
		{"a stream name with a dot", append(slices.Clone(required), "stream.name=a.b"), "/stream/name"},
		{"an events stream name with a dot", append(slices.Clone(required), "stream.events=a.b"), "/stream/events"},
		{"the events stream is the stream", append(slices.Clone(required), "stream.name=KW", "stream.events=KW"), "stream.events must differ from stream.name"},
		{"a prefix with an empty token", append(slices.Clone(required), "subjectPrefix=a..b"), "/subjectPrefix"},
		{"a prefix with a wildcard", append(slices.Clone(required), "subjectPrefix=kw.*"), "/subjectPrefix"},
		{"the internal prefix", append(slices.Clone(required), "subjectPrefix=_kraftwatch.kw"), "subjectPrefix: its first token _kraftwatch is kept"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := helmTemplate(t, c.set, nil)
			if err == nil {
				t.Fatalf("helm template succeeded, want an error about %q", c.want)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("helm template failed without naming %q:\n%s", c.want, out)
			}
		})
	}
}

// TestChartNamesAsKraftwatch renders the chart with subject prefixes and stream names
// kraftwatch accepts and refuses: the chart must refuse exactly those kraftwatch
// refuses, so that no value passes helm and then stops the pod.
func TestChartNamesAsKraftwatch(t *testing.T) {
	out, err := helmTemplate(t, required, nil)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	base := checkRendered(t, decodeObjects(t, out)).env
	for _, c := range []struct{ value, env string }{
		{"subjectPrefix=kw", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=kw.prod-1_a", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=kraftwatch._kraftwatch", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=a..b", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=.a", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=a.", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=a*", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=a.>", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=a b", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=a/b", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=é", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=_kraftwatch", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"subjectPrefix=_kraftwatch.kw", "KRAFTWATCH_SUBJECT_PREFIX"},
		{"stream.name=KW_prod-1", "KRAFTWATCH_STREAM_NAME"},
		{"stream.name=a.b", "KRAFTWATCH_STREAM_NAME"},
		{"stream.name=a b", "KRAFTWATCH_STREAM_NAME"},
		{"stream.name=a*", "KRAFTWATCH_STREAM_NAME"},
		{"stream.events=none", "KRAFTWATCH_EVENTS_STREAM"},
		{"stream.events=EV", "KRAFTWATCH_EVENTS_STREAM"},
		{"stream.events=a.b", "KRAFTWATCH_EVENTS_STREAM"},
		{"stream.events=a>", "KRAFTWATCH_EVENTS_STREAM"},
	} {
		t.Run(c.value, func(t *testing.T) {
			out, err := helmTemplate(t, append(slices.Clone(required), c.value), nil)
			env := maps.Clone(base)
			_, env[c.env], _ = strings.Cut(c.value, "=")
			problems := settingProblems(t, c.value, env)
			switch {
			case err == nil && len(problems) > 0:
				t.Errorf("the chart renders %s, which kraftwatch refuses: %v", c.value, problems)
			case err != nil && len(problems) == 0:
				t.Errorf("the chart refuses %s, which kraftwatch accepts:\n%s", c.value, out)
			}
		})
	}
}

// checkStrimzi checks examples/strimzi.yaml with examples/strimzi-kafkauser.yaml: the
// certificate kraftwatch presents is the KafkaUser's, whose ACLs grant what kraftwatch
// needs, and the controllers' NetworkPolicy selects Strimzi's controller pods.
func checkStrimzi(t *testing.T, r rendered) {
	b, err := os.ReadFile(filepath.Join(chart, "examples", "strimzi-kafkauser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var user struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name   string            `yaml:"name"`
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec struct {
			Authentication struct {
				Type string `yaml:"type"`
			} `yaml:"authentication"`
			Authorization struct {
				ACLs []struct {
					Resource struct {
						Type string `yaml:"type"`
						Name string `yaml:"name"`
					} `yaml:"resource"`
					Operations []string `yaml:"operations"`
				} `yaml:"acls"`
			} `yaml:"authorization"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(b, &user); err != nil {
		t.Fatal(err)
	}
	if user.Kind != "KafkaUser" || user.Spec.Authentication.Type != "tls" {
		t.Errorf("strimzi-kafkauser.yaml: %s with %s authentication, want a tls KafkaUser", user.Kind, user.Spec.Authentication.Type)
	}
	grants := map[string][]string{}
	for _, a := range user.Spec.Authorization.ACLs {
		grants[a.Resource.Type+":"+a.Resource.Name] = append(grants[a.Resource.Type+":"+a.Resource.Name], a.Operations...)
	}
	for res, op := range map[string]string{"cluster:": "ClusterAction", "topic:__consumer_offsets": "Read"} {
		if !slices.Contains(grants[res], op) {
			t.Errorf("KafkaUser grants %v on %s, kraftwatch needs %s", grants[res], res, op)
		}
	}
	// Strimzi's KafkaUser Secret holds ca.crt, user.crt, user.key.
	for _, k := range []string{"KRAFTWATCH_CONTROLLER_TLS_CERT_FILE", "KRAFTWATCH_CONTROLLER_TLS_KEY_FILE", "KRAFTWATCH_KAFKA_TLS_CERT_FILE"} {
		if !strings.HasSuffix(r.env[k], "/user.crt") && !strings.HasSuffix(r.env[k], "/user.key") {
			t.Errorf("%s=%s is not a key of Strimzi's KafkaUser Secret", k, r.env[k])
		}
	}
	found := false
	for _, v := range r.pod.Volumes {
		if v.Secret != nil && v.Secret.SecretName == user.Metadata.Name {
			found = true
		}
	}
	if !found {
		t.Errorf("no volume mounts the KafkaUser's Secret %s", user.Metadata.Name)
	}
	for _, np := range r.get("NetworkPolicy") {
		var spec struct {
			PodSelector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"podSelector"`
		}
		decodeSpec(t, np, &spec)
		if sel := spec.PodSelector.MatchLabels; sel["strimzi.io/cluster"] != "" {
			if sel["strimzi.io/cluster"] != user.Metadata.Labels["strimzi.io/cluster"] || sel["strimzi.io/controller-role"] != "true" {
				t.Errorf("controller NetworkPolicy selects %v, want cluster %s's controllers", sel, user.Metadata.Labels["strimzi.io/cluster"])
			}
		}
	}
	for _, p := range hostPorts(t, r.env["KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS"]) {
		if p != 9090 {
			t.Errorf("Strimzi's controller listener is 9090, not %d", p)
		}
	}
}

// TestChartNotes renders NOTES.txt and checks it names the Deployment, the controllers
// and NATS. Helm renders NOTES only when installing, which needs a cluster even with
// --dry-run, so the test renders a copy of the chart whose NOTES are an ordinary template.
func TestChartNotes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kraftwatch")
	if err := os.CopyFS(dir, os.DirFS(chart)); err != nil {
		t.Fatal(err)
	}
	notes, err := os.ReadFile(filepath.Join(dir, "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"_notes.tpl":             `{{ define "deploytest.notes" }}` + string(notes) + `{{ end }}`,
		"notes-as-template.yaml": "notes: |\n{{ include \"deploytest.notes\" . | indent 2 }}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, "templates", name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"template", "kw", dir, "--namespace", "kraftwatch", "--kube-version", kubeVersion,
		"--show-only", "templates/notes-as-template.yaml"}
	for _, s := range required {
		args = append(args, "--set", escapeSet(s))
	}
	out, err := run(t, "helm", args...)
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	for _, want := range []string{"deployment/kw-kraftwatch", "controller-0.kafka:9093", "nats://nats.nats:4222", "/kraftwatch watch"} {
		if !strings.Contains(out, want) {
			t.Errorf("NOTES lack %q:\n%s", want, out)
		}
	}
}
