package deploytest

import (
	"os"
	"path"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Bitnami's kafka chart: the data volume, where it is mounted in Kafka's container, the
// log.dirs it writes there, and its user.
const (
	bitnamiDataVolume = "data"
	bitnamiDataMount  = "/bitnami/kafka"
	bitnamiLogDir     = "/bitnami/kafka/data"
	bitnamiUser       = 1001
)

// TestBitnamiSidecar checks examples/bitnami-kafka-sidecar.yaml: each node kind's
// sidecar, put in a Pod beside the volumes the chart and the example give it, is a valid
// Pod, mounts Kafka's data volume read-only where KRAFTWATCH_METADATA_LOG_DIR points at
// Kafka's log dir, runs as Kafka's user, and passes the same checks against the program
// as the chart's Deployment.
func TestBitnamiSidecar(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(chart, "examples", "bitnami-kafka-sidecar.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]struct {
		Sidecars     []yaml.Node `yaml:"sidecars"`
		ExtraVolumes []yaml.Node `yaml:"extraVolumes"`
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	for _, role := range []string{"controller", "broker"} {
		t.Run(role, func(t *testing.T) {
			v, ok := values[role]
			if !ok || len(v.Sidecars) != 1 {
				t.Fatalf("%s.sidecars: want the kraftwatch container", role)
			}
			// The Pod Bitnami's StatefulSet would make, reduced to what the sidecar uses.
			pod := map[string]any{
				"apiVersion": "v1", "kind": "Pod",
				"metadata": map[string]any{"name": "kafka-" + role + "-0"},
				"spec": map[string]any{
					"securityContext": map[string]any{"fsGroup": bitnamiUser},
					"containers": append([]any{map[string]any{
						"name": "kafka", "image": "bitnami/kafka",
						"volumeMounts": []any{map[string]any{"name": bitnamiDataVolume, "mountPath": bitnamiDataMount}},
					}}, nodes(v.Sidecars)...),
					"volumes": append([]any{map[string]any{
						"name": bitnamiDataVolume, "persistentVolumeClaim": map[string]any{"claimName": "data-kafka-" + role + "-0"},
					}}, nodes(v.ExtraVolumes)...),
				},
			}
			manifest, err := yaml.Marshal(pod)
			if err != nil {
				t.Fatal(err)
			}
			kubeconform(t, string(manifest))

			var c container
			if err := v.Sidecars[0].Decode(&c); err != nil {
				t.Fatal(err)
			}
			var vols []volume
			for _, n := range v.ExtraVolumes {
				var vol volume
				if err := n.Decode(&vol); err != nil {
					t.Fatal(err)
				}
				vols = append(vols, vol)
			}
			vols = append(vols, volume{Name: bitnamiDataVolume})
			checkContainer(t, role+".sidecars", c, vols)

			env := c.env()
			dir := env["KRAFTWATCH_METADATA_LOG_DIR"]
			if dir == "" || env["KRAFTWATCH_CONTROLLER_BOOTSTRAP_SERVERS"] != "" {
				t.Fatalf("the sidecar is not in disk mode: %v", env)
			}
			mounted := false
			for _, m := range c.VolumeMounts {
				if m.Name != bitnamiDataVolume {
					continue
				}
				mounted = true
				if !m.ReadOnly {
					t.Errorf("the sidecar mounts Kafka's volume %s read-write", m.Name)
				}
				// The path Kafka's log dir has inside the sidecar.
				rel, err := filepath.Rel(bitnamiDataMount, bitnamiLogDir)
				if err != nil {
					t.Fatal(err)
				}
				if want := path.Join(m.MountPath, rel); path.Clean(dir) != want {
					t.Errorf("KRAFTWATCH_METADATA_LOG_DIR=%s; Kafka's log dir %s is at %s in the sidecar", dir, bitnamiLogDir, want)
				}
			}
			if !mounted {
				t.Errorf("the sidecar does not mount Kafka's volume %s", bitnamiDataVolume)
			}
			if u := c.SecurityContext.RunAsUser; u == nil || *u != bitnamiUser {
				t.Errorf("the sidecar runs as %v; Kafka's snapshots are readable by Kafka's user (%d) only", u, bitnamiUser)
			}
			if c.SecurityContext.RunAsNonRoot == nil || !*c.SecurityContext.RunAsNonRoot {
				t.Error("the sidecar does not set runAsNonRoot")
			}
		})
	}
}

func nodes(ns []yaml.Node) []any {
	var out []any
	for _, n := range ns {
		var v any
		if err := n.Decode(&v); err != nil {
			panic(err)
		}
		out = append(out, v)
	}
	return out
}
