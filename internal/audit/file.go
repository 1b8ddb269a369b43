package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Rotation bounds a log file: when it has reached MaxBytes it is renamed
// to <path>.1 (the older ones to .2 ... .<Keep>, the oldest removed) and a
// new one is started. The log takes at most about (Keep+1) x MaxBytes: a
// rotated file holds from MaxBytes to one write more (one batch of records
// queued together, see File), or more when another process with a smaller
// bound rotated it (see File).
type Rotation struct {
	MaxBytes int64
	Keep     int
}

// DefaultRotation keeps the log under about 40 MiB: 10 MiB, three old files.
var DefaultRotation = Rotation{MaxBytes: 10 << 20, Keep: 3}

// File is a log file that every toolwarden process of a user appends to at
// once (hooks, wraps, proxies, serve, approvals revoke). Each Write is one
// record; the records that queue up while a write is in flight are written
// together, with one write on an O_APPEND descriptor, so records from
// different processes never interleave. Writers hold a shared lock on
// <path>.lock while they append and the rotating one holds it exclusively,
// so no record is written into a file being renamed or removed, and a file
// is rotated once: whoever rotates checks first, under the lock, that the
// file at path is still the full one.
//
// Noticing another process's rotation: before each write, File fstats its
// own descriptor (no path lookup). A file another process rotated away had
// reached the bound, so its size sends this writer to the rotation path,
// which finds the new file at path; a file removed has no links left, and
// is started again. Anything else (a rotation by a process with a smaller
// bound, a rename by hand or by logrotate) is noticed by stat-ing the path,
// which happens at most once every CheckEvery. A record written in that
// window goes into the file that was just rotated: it is not lost, it is in
// the kept file (<path>.1), and that file can exceed the bound by what
// was written to it during one interval.
type File struct {
	path string
	rot  Rotation

	mu      sync.Mutex // the descriptors and the rotation check; held by one batch's writer
	f       *os.File   // the file at path when last looked
	lock    *os.File
	checked time.Time // when the path was last stat-ed
	now     func() time.Time
	stat    func(string) (fs.FileInfo, error)

	q commitQueue
}

// CheckEvery is how often at most a File stats its path to notice a
// rotation its own descriptor cannot show (see File).
const CheckEvery = 250 * time.Millisecond

// OpenFile opens (creating it and its directory, private to the user) the
// log at path for appending, rotated as rot says; rot.MaxBytes <= 0 never
// rotates.
func OpenFile(path string, rot Rotation) (*File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit: cannot create the directory of the audit log %s: %w", path, err)
	}
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: cannot open the audit log's lock file: %w", err)
	}
	f, err := openAppend(path)
	if err != nil {
		lock.Close()
		return nil, err
	}
	l := &File{path: path, rot: rot, f: f, lock: lock, now: time.Now, stat: os.Stat}
	l.q.write = l.writeBatch
	l.endLine()
	return l, nil
}

// endLine ends a last line left without its newline (a hand edit, a
// truncated copy), so that the next record starts a line of its own
// instead of being glued to it and lost with it. Under the exclusive lock
// no record is half written.
func (l *File) endLine() {
	if lockExclusive(l.lock) != nil {
		return
	}
	defer unlock(l.lock)
	if _, err := l.follow(); err != nil {
		return
	}
	r, err := os.Open(l.path)
	if err != nil {
		return
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil || fi.Size() == 0 {
		return
	}
	last := make([]byte, 1)
	if _, err := r.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
		l.f.Write([]byte("\n"))
	}
}

func openAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: cannot open the audit log: %w (set [audit] path in the config, pass --audit FILE, or turn it off with --audit off)", err)
	}
	return f, nil
}

// Path is the log's path.
func (l *File) Path() string { return l.path }

// Write appends p, one whole record, rotating the log first when it is
// full. It returns once p is written: with the records queued while the
// write before it was in flight, in the order they were queued.
func (l *File) Write(p []byte) (int, error) {
	if err := l.q.commit(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// writeBatch appends p, one or more whole records, with one write.
func (l *File) writeBatch(p []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("audit: the audit log is closed")
	}
	if err := lockShared(l.lock); err != nil {
		return fmt.Errorf("audit: locking %s.lock: %w", l.path, err)
	}
	size, err := l.size()
	if err == nil && l.rot.MaxBytes > 0 && size >= l.rot.MaxBytes {
		// Rotate under the exclusive lock and write there too: a writer
		// that took the shared lock meanwhile waits, then finds the new file.
		unlock(l.lock)
		if err := lockExclusive(l.lock); err != nil {
			return fmt.Errorf("audit: locking %s.lock: %w", l.path, err)
		}
		err = l.rotateIfFull()
	}
	defer unlock(l.lock)
	// A rotation that failed (a rename refused) still writes the records
	// where the log is: the bound is looser, nothing is lost.
	if _, werr := l.f.Write(p); werr != nil {
		return fmt.Errorf("audit: writing %s: %w", l.path, werr)
	}
	return err
}

// size is the size of the file to write to, following the path when the
// descriptor shows the file was removed or rotated, or when the path has
// not been looked at for CheckEvery (see File).
func (l *File) size() (int64, error) {
	now := l.now()
	if d := now.Sub(l.checked); d >= CheckEvery || d < 0 {
		return l.follow()
	}
	fi, err := l.f.Stat()
	if err != nil || unlinked(fi) {
		return l.follow()
	}
	// A full file goes to rotateIfFull, which follows the path itself.
	return fi.Size(), nil
}

// follow makes l.f the file at path (another process may have rotated it
// away) and returns its size.
func (l *File) follow() (int64, error) {
	l.checked = l.now()
	cur, err := l.stat(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, l.reopen() // removed by hand: start a new one
	}
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	ours, err := l.f.Stat()
	if err == nil && os.SameFile(cur, ours) {
		return cur.Size(), nil
	}
	if err := l.reopen(); err != nil {
		return 0, err
	}
	return cur.Size(), nil
}

func (l *File) reopen() error {
	f, err := openAppend(l.path)
	if err != nil {
		return err
	}
	l.f.Close()
	l.f = f
	return nil
}

// rotateIfFull rotates the file at path when it is still full (whoever
// held the exclusive lock before may have rotated it already) and leaves
// l.f the file at path. The caller holds the exclusive lock.
func (l *File) rotateIfFull() error {
	size, err := l.follow()
	if err != nil || size < l.rot.MaxBytes {
		return err
	}
	if l.rot.Keep <= 0 {
		// Nothing is kept: start over in place (a rename would leave
		// nothing to remove it later).
		if err := os.Truncate(l.path, 0); err != nil {
			return fmt.Errorf("audit: rotating %s: %w", l.path, err)
		}
		return nil
	}
	if err := os.Remove(l.rotated(l.rot.Keep)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("audit: rotating %s: %w", l.path, err)
	}
	for i := l.rot.Keep - 1; i >= 1; i-- {
		if err := os.Rename(l.rotated(i), l.rotated(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("audit: rotating %s: %w", l.path, err)
		}
	}
	if err := os.Rename(l.path, l.rotated(1)); err != nil {
		return fmt.Errorf("audit: rotating %s: %w", l.path, err)
	}
	return l.reopen()
}

func (l *File) rotated(i int) string { return Rotated(l.path, i) }

// Rotated is the path of the i-th newest rotated file of the log at path
// (1: the one rotated last).
func Rotated(path string, i int) string { return path + "." + strconv.Itoa(i) }

// Close closes the log.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.lock.Close()
	l.f, l.lock = nil, nil
	return err
}
