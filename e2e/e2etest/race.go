//go:build race

package e2etest

// raceEnabled: the test binary runs with the race detector, so kraftwatch is built with
// it too and a data race in the process fails the test.
const raceEnabled = true
