package e2etest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// CaptureEnv names a directory into which Capture writes the events the e2e tests
// receive, as kraftwatch published them: the golden events of events/testdata/captured,
// regenerated with
//
//	KRAFTWATCH_E2E_CAPTURE=$PWD/events/testdata/captured flock /tmp/kraftwatch-kafka.lock \
//	  go test -tags e2e -count=1 -run 'TestRebalanced$|TestSidecarPartitionsAdded$' ./e2e/
const CaptureEnv = "KRAFTWATCH_E2E_CAPTURE"

var captureMu sync.Mutex

// Capture writes body, an event of type typ ("rebalance_needed", "rebalanced") whose
// reasons or causes are of kinds, to <typ>.<kinds>.json in the CaptureEnv directory,
// when it is set and no event of the same name is there yet. Errors are ignored: a
// capture is not a test.
func Capture(typ string, kinds []string, body []byte) {
	dir := os.Getenv(CaptureEnv)
	if dir == "" {
		return
	}
	kinds = slices.Compact(slices.Sorted(slices.Values(kinds)))
	name := filepath.Join(dir, typ+"."+strings.Join(kinds, "+")+".json")
	captureMu.Lock()
	defer captureMu.Unlock()
	if _, err := os.Stat(name); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	_ = os.MkdirAll(dir, 0o755)
	_ = os.WriteFile(name, append(slices.Clone(body), '\n'), 0o644)
}
