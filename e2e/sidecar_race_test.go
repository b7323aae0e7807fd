//go:build e2e && race

package e2e

// scRace: the test binary runs with the race detector, so kraftwatch is built with it
// too and a data race in the process fails the test.
const scRace = true
