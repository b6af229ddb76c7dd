//go:build !race

package tools

// raceEnabled reports a build with the race detector.
const raceEnabled = false
