package audit

import (
	"io/fs"
	"time"
)

// SetClockAndStat makes f read the time from now and stat its path with
// stat, so a test can count the path's stats against a clock it moves.
func SetClockAndStat(f *File, now func() time.Time, stat func(string) (fs.FileInfo, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now, f.stat = now, stat
}

// SetBeforeWrite calls hook with every batch before it is written (it may
// block, to hold a write in flight).
func SetBeforeWrite(f *File, hook func([]byte)) {
	write := f.writeBatch
	f.q.mu.Lock()
	defer f.q.mu.Unlock()
	f.q.write = func(p []byte) error { hook(p); return write(p) }
}

// Queued is how many bytes of records wait behind the write in flight.
func Queued(f *File) int {
	f.q.mu.Lock()
	defer f.q.mu.Unlock()
	if f.q.next == nil {
		return 0
	}
	return len(f.q.next.buf)
}
