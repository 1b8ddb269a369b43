package session

import "time"

// SetRacyWindow sets how long after a change p compares the file's bytes
// on every check: 0 makes a test see what the stat stamp alone detects; a
// long window measures the cost of a just-changed file.
func SetRacyWindow(p *Persistent, d time.Duration) { p.racyWindow = d }

// TrustStampAtOnce is SetRacyWindow(p, 0).
func TrustStampAtOnce(p *Persistent) { SetRacyWindow(p, 0) }

// StampComplete reports whether a stat here sees inode and ctime.
const StampComplete = stampComplete
