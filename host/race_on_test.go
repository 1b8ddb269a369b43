//go:build race

package host

// raceEnabled: the race detector makes sync.Pool drop objects at random,
// which tests of which core gets what cannot allow for.
const raceEnabled = true
