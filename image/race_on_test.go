//go:build race

package image

// raceEnabled skips the heap measurement: the race detector makes building a
// 1M-partition image slow and distorts allocation sizes.
const raceEnabled = true
