//go:build race

package web

// raceEnabled: the race detector runs, which makes heap figures meaningless
// and large scans slow.
const raceEnabled = true
