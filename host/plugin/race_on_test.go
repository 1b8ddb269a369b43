//go:build race

package plugin

// raceEnabled: the race detector makes sync.Pool drop objects at random,
// so a P's home slot (pool.go) changes from one event to the next.
const raceEnabled = true
