package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Grant is one persistent ("always") approval.
type Grant struct {
	ApprovalKey
	GrantedAt time.Time `json:"granted_at"`
}

// Persistent is the "always" approvals file. Approvals are keyed by the
// exact definition hash, so a changed tool is never covered by an old grant.
//
// Several processes share the file (every wrap, proxy and the approvals
// command): writes take an exclusive lock and replace the file by rename,
// and every Remembered call stats the file, so a change made anywhere (a
// revoke, an edit by hand, a deletion) is seen before the next decision
// that would use it. A file that cannot be read grants nothing.
type Persistent struct {
	path string

	// cur is what was last read; the hot path only loads it. Readers never
	// block: a refresh builds a new value and swaps it in.
	cur atomic.Pointer[loaded]
	// refreshing serialises reads of the file, so that a slow, older read
	// cannot replace a newer one.
	refreshing sync.Mutex
	logger     atomic.Pointer[slog.Logger]
	// racyWindow is racyWindow, except in tests that check what a stat
	// alone sees.
	racyWindow time.Duration
}

// loaded is one reading of the file. It is never modified after it is
// published.
type loaded struct {
	stamp  fileStamp
	grants map[ApprovalKey]time.Time
	raw    []byte
	// err is why the file cannot be used (grants is then empty).
	err error
	// racy: the file changed so recently that a rewrite within the same
	// timestamp tick would not change its stamp, so its bytes are compared
	// on every check until it is old enough.
	racy bool
	// retry: the file could not be read at all; read it again next time.
	retry bool
}

// fileStamp is what a stat says about the file; any difference means it
// must be read again.
type fileStamp struct {
	exists       bool
	size         int64
	mtime, ctime int64 // nanoseconds
	ino, dev     uint64
}

// racyWindow is how long after a change a file's stamp is not trusted
// alone: filesystem timestamps can be as coarse as 2 s (FAT) and the
// kernel's clock tick is coarser than a nanosecond everywhere.
const racyWindow = 2 * time.Second

// maxFileSize bounds what is read of the file: a hundred thousand grants
// fit, and a runaway file cannot make every check read gigabytes.
const maxFileSize = 32 << 20

// OpenPersistent opens the approvals file at path; a missing file holds no
// approvals. A file that cannot be read or has the wrong shape does not
// stop the caller: it grants nothing, its error is logged and reported by
// Err, and it is never written over (Reset backs it up first). The error
// result is kept for callers written against earlier versions; it is nil.
func OpenPersistent(path string) (*Persistent, error) {
	p := &Persistent{path: path, racyWindow: racyWindow}
	p.cur.Store(&loaded{grants: map[ApprovalKey]time.Time{}})
	p.refresh(true)
	return p, nil
}

// Path is the file's location.
func (p *Persistent) Path() string { return p.path }

// SetLogger sends the file's problems (unreadable, wrong shape) to l
// instead of slog.Default().
func (p *Persistent) SetLogger(l *slog.Logger) { p.logger.Store(l) }

// Err reports why the file cannot be used right now (nil when it can, or
// when it does not exist). While it is not nil no "always" approval
// applies.
func (p *Persistent) Err() error { return p.current().err }

// Remembered reports whether an "always" approval covers the key. It looks
// at the file first, so a grant revoked by any process is gone here.
func (p *Persistent) Remembered(app, server, connector, tool, hash string) bool {
	_, ok := p.current().grants[ApprovalKey{app, server, connector, tool, hash}]
	return ok
}

// current returns the file's grants as they are now: a stat, and a read
// only when the stat differs from the last read (or the last read was too
// recent to trust its stamp).
func (p *Persistent) current() *loaded {
	l := p.cur.Load()
	if stampComplete && !l.racy && !l.retry {
		if st, err := statStamp(p.path); err == nil && st == l.stamp {
			return l
		}
	}
	return p.refresh(false)
}

// refresh reads the file again (always when force, else only if it
// changed) and publishes what it found.
func (p *Persistent) refresh(force bool) *loaded {
	p.refreshing.Lock()
	defer p.refreshing.Unlock()
	prev := p.cur.Load()
	next := p.read(prev, force)
	if next != prev {
		p.cur.Store(next)
		p.report(prev, next)
	}
	return next
}

// read builds the next reading from the file, reusing prev when nothing
// changed.
func (p *Persistent) read(prev *loaded, force bool) *loaded {
	st, err := statStamp(p.path)
	if err != nil {
		return p.failed(fileStamp{}, fmt.Errorf("%s: %w; no \"always\" approval applies until it can be read", p.path, err))
	}
	if !st.exists {
		if !force && !prev.stamp.exists && !prev.retry {
			return prev
		}
		return &loaded{grants: map[ApprovalKey]time.Time{}}
	}
	if !force && stampComplete && st == prev.stamp && !prev.racy && !prev.retry {
		return prev
	}
	f, err := os.Open(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &loaded{grants: map[ApprovalKey]time.Time{}}
	}
	if err != nil {
		return p.failed(st, fmt.Errorf("%s: %w; no \"always\" approval applies until it can be read", p.path, err))
	}
	defer f.Close()
	// The stamp of the open file describes exactly the bytes read below,
	// even if the path is replaced meanwhile: a later stat then differs.
	st, err = fileStampOf(f)
	if err != nil {
		return p.failed(fileStamp{}, fmt.Errorf("%s: %w", p.path, err))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return p.failed(fileStamp{}, fmt.Errorf("%s: %w; no \"always\" approval applies until it can be read", p.path, err))
	}
	if len(data) > maxFileSize {
		// Not read again until it changes: the stamp is kept.
		return &loaded{stamp: st, grants: map[ApprovalKey]time.Time{}, racy: false,
			err: fmt.Errorf("%s: %w: larger than %d MiB; no \"always\" approval applies", p.path, ErrBadApprovalsFile, maxFileSize>>20)}
	}
	racy := !stampComplete || time.Since(time.Unix(0, max(st.mtime, st.ctime))) < p.racyWindow
	if prev.stamp.exists && !prev.retry && bytes.Equal(data, prev.raw) {
		// Same bytes: same grants, or the same problem (logged already).
		if st == prev.stamp && racy == prev.racy {
			return prev
		}
		return &loaded{stamp: st, grants: prev.grants, raw: prev.raw, err: prev.err, racy: racy}
	}
	grants, err := parseGrants(p.path, data)
	if err != nil {
		return &loaded{stamp: st, grants: map[ApprovalKey]time.Time{}, raw: data, err: err, racy: racy}
	}
	return &loaded{stamp: st, grants: grants, raw: data, racy: racy}
}

// failed is a reading that grants nothing and is retried on the next
// check.
func (p *Persistent) failed(st fileStamp, err error) *loaded {
	return &loaded{stamp: st, grants: map[ApprovalKey]time.Time{}, err: err, retry: true}
}

// report logs a change in the file's health: once per new problem, and
// once when it is readable again.
func (p *Persistent) report(prev, next *loaded) {
	log := p.logger.Load()
	if log == nil {
		log = slog.Default()
	}
	switch {
	case next.err != nil && (prev.err == nil || prev.err.Error() != next.err.Error() || prev.stamp != next.stamp):
		log.Error("approvals file unusable: no \"always\" approval applies", "file", p.path, "err", next.err)
	case next.err == nil && prev.err != nil:
		log.Info("approvals file readable again", "file", p.path, "approvals", len(next.grants))
	}
}

// Add stores an "always" approval and writes the file. It refuses to write
// over a file it cannot read (see Reset).
func (p *Persistent) Add(k ApprovalKey, now time.Time) error {
	if err := checkGrant(Grant{k, now}); err != nil {
		return fmt.Errorf("not adding an approval to %s: %w", p.path, err)
	}
	return p.update(func(m map[ApprovalKey]time.Time) int {
		m[k] = now
		return 1
	})
}

// Revoke removes every grant for which match returns true and reports how
// many were removed. Every process sharing the file stops honouring them
// before its next decision. A file that cannot be read is refused (Reset
// clears it).
func (p *Persistent) Revoke(match func(Grant) bool) (int, error) {
	n := 0
	err := p.update(func(m map[ApprovalKey]time.Time) int {
		for k, t := range m {
			if match(Grant{k, t}) {
				delete(m, k)
				n++
			}
		}
		return n
	})
	return n, err
}

// Reset revokes every approval, whatever state the file is in: it copies
// the current file (readable or not) to <file>.bak-<UTC time> and writes an
// empty one. It returns the backup's path ("" when there was no file).
func (p *Persistent) Reset(now time.Time) (backup string, err error) {
	err = p.locked(func() error {
		data, err := os.ReadFile(p.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("%s: %w (not reset: the file could not be backed up)", p.path, err)
		default:
			backup = p.path + ".bak-" + now.UTC().Format("20060102T150405.000000000Z")
			if err := writeNew(backup, data); err != nil {
				return fmt.Errorf("backing up %s: %w (not reset)", p.path, err)
			}
		}
		empty, err := encodeGrants(nil)
		if err != nil {
			return err
		}
		return replaceFile(p.path, empty)
	})
	return backup, err
}

// List returns every grant, sorted by server, tool and time, or the
// reason the file cannot be used.
func (p *Persistent) List() ([]Grant, error) {
	l := p.refresh(true)
	if l.err != nil {
		return nil, l.err
	}
	out := make([]Grant, 0, len(l.grants))
	for k, t := range l.grants {
		out = append(out, Grant{k, t})
	}
	sortGrants(out)
	return out, nil
}

func sortGrants(g []Grant) {
	sort.Slice(g, func(i, j int) bool {
		a, b := g[i], g[j]
		switch {
		case a.Server != b.Server:
			return a.Server < b.Server
		case a.Tool != b.Tool:
			return a.Tool < b.Tool
		case !a.GrantedAt.Equal(b.GrantedAt):
			return a.GrantedAt.Before(b.GrantedAt)
		case a.Hash != b.Hash:
			return a.Hash < b.Hash
		case a.App != b.App:
			return a.App < b.App
		}
		return a.Connector < b.Connector
	})
}

// update re-reads the file under an exclusive lock, applies change, and
// writes it back atomically (temp file and rename). A file it cannot read
// strictly is left untouched and its error returned.
func (p *Persistent) update(change func(map[ApprovalKey]time.Time) int) error {
	return p.locked(func() error {
		grants := map[ApprovalKey]time.Time{}
		data, err := os.ReadFile(p.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("%s: %w", p.path, err)
		case len(data) > maxFileSize:
			return fmt.Errorf("%s: %w: larger than %d MiB", p.path, ErrBadApprovalsFile, maxFileSize>>20)
		default:
			if grants, err = parseGrants(p.path, data); err != nil {
				return err
			}
		}
		if change(grants) == 0 {
			return nil
		}
		data, err = encodeGrants(grants)
		if err != nil {
			return err
		}
		return replaceFile(p.path, data)
	})
}

// locked runs fn under the file's exclusive lock (shared with every
// process), then reads the file again so this process sees its own change
// before the call returns.
func (p *Persistent) locked(fn func() error) error {
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return err
	}
	lock, err := os.OpenFile(p.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := lockFile(lock); err != nil {
		return err
	}
	defer unlockFile(lock) //nolint:errcheck
	err = fn()
	p.refresh(true)
	return err
}

// replaceFile writes data to path atomically: readers see the old file or
// the new one, never a part.
func replaceFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".approvals-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// writeNew writes data to a file that must not exist yet.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
