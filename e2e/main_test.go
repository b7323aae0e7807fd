//go:build e2e

package e2e

import (
	"os"
	"testing"

	"github.com/kraftwatch/kraftwatch/e2e/e2etest"
)

// TestMain stops the shared Kafka clusters (e2etest.Shared) once every test has run.
func TestMain(m *testing.M) {
	os.Exit(e2etest.Main(m))
}
