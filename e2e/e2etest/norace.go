//go:build !race

package e2etest

const raceEnabled = false
