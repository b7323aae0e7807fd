// Package deploytest checks what deploy/ ships against kraftwatch itself: the Helm chart
// (rendered by Helm for several value sets, validated by kubeconform against the strict
// schemas in schemas/, and against the program's settings, validation and endpoints),
// the disk-mode sidecar examples, the Prometheus alerts (promtool check and unit tests)
// and the Grafana dashboard (every PromQL expression parses and names a metric that
// kraftwatch exports).
//
// It is its own module so that Helm, kubeconform and Prometheus stay out of kraftwatch's
// go.mod. The tools are built once from the Go module proxy into .cache/bin/ at the
// versions below; the kraftwatch binary is built from the work tree on every run.
//
//	make deploy                 (or: cd deploy/test && go test ./...)
package deploytest
