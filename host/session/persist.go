package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// Grant is one persistent ("always") approval.
type Grant struct {
	ApprovalKey
	GrantedAt time.Time `json:"granted_at"`
}

// approvalsFile is the on-disk shape.
type approvalsFile struct {
	Version   int     `json:"version"`
	Approvals []Grant `json:"approvals"`
}

// Persistent is the "always" approvals file. Approvals are keyed by the
// exact definition hash, so a changed tool is never covered by an old grant.
// Several processes may share the file: writes take an exclusive lock and
// readers notice changes by modification time.
type Persistent struct {
	path string

	mu      sync.RWMutex
	grants  map[ApprovalKey]time.Time
	modTime time.Time
	checked time.Time
}

// recheck is how often Remembered looks at the file for changes made by
// another process (for example `toolwarden approvals revoke`).
const recheck = 500 * time.Millisecond

// OpenPersistent loads the approvals file at path; a missing file is empty.
func OpenPersistent(path string) (*Persistent, error) {
	p := &Persistent{path: path, grants: map[ApprovalKey]time.Time{}}
	if err := p.reload(); err != nil {
		return nil, err
	}
	return p, nil
}

// Path is the file's location.
func (p *Persistent) Path() string { return p.path }

func (p *Persistent) reload() error {
	st, err := os.Stat(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		p.mu.Lock()
		p.grants, p.modTime, p.checked = map[ApprovalKey]time.Time{}, time.Time{}, time.Now()
		p.mu.Unlock()
		return nil
	}
	if err != nil {
		return err
	}
	grants, err := readGrants(p.path)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.grants, p.modTime, p.checked = grants, st.ModTime(), time.Now()
	p.mu.Unlock()
	return nil
}

func readGrants(path string) (map[ApprovalKey]time.Time, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[ApprovalKey]time.Time{}, nil
	}
	if err != nil {
		return nil, err
	}
	var f approvalsFile
	if len(data) > 0 {
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("%s: %w (delete or fix the file; it holds \"always\" approvals)", path, err)
		}
	}
	m := make(map[ApprovalKey]time.Time, len(f.Approvals))
	for _, g := range f.Approvals {
		m[g.ApprovalKey] = g.GrantedAt
	}
	return m, nil
}

// Remembered reports whether an "always" approval covers the key.
func (p *Persistent) Remembered(app, server, connector, tool, hash string) bool {
	p.mu.RLock()
	stale := time.Since(p.checked) > recheck
	p.mu.RUnlock()
	if stale {
		if st, err := os.Stat(p.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			p.mu.RLock()
			changed := (err == nil && !st.ModTime().Equal(p.modTime)) || (err != nil && !p.modTime.IsZero())
			p.mu.RUnlock()
			if changed {
				_ = p.reload() // on error keep what we had; a broken file never grants more
			} else {
				p.mu.Lock()
				p.checked = time.Now()
				p.mu.Unlock()
			}
		}
	}
	p.mu.RLock()
	_, ok := p.grants[ApprovalKey{app, server, connector, tool, hash}]
	p.mu.RUnlock()
	return ok
}

// Add stores an "always" approval and writes the file.
func (p *Persistent) Add(k ApprovalKey, now time.Time) error {
	return p.update(func(m map[ApprovalKey]time.Time) int {
		m[k] = now
		return 1
	})
}

// Revoke removes every grant for which match returns true and reports how
// many were removed.
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

// List returns every grant, sorted by server, tool and time.
func (p *Persistent) List() ([]Grant, error) {
	if err := p.reload(); err != nil {
		return nil, err
	}
	p.mu.RLock()
	out := make([]Grant, 0, len(p.grants))
	for k, t := range p.grants {
		out = append(out, Grant{k, t})
	}
	p.mu.RUnlock()
	sortGrants(out)
	return out, nil
}

func sortGrants(g []Grant) {
	sort.Slice(g, func(i, j int) bool {
		a, b := g[i], g[j]
		if a.Server != b.Server {
			return a.Server < b.Server
		}
		if a.Tool != b.Tool {
			return a.Tool < b.Tool
		}
		return a.GrantedAt.Before(b.GrantedAt)
	})
}

// update re-reads the file under an exclusive lock, applies change, and
// writes it back atomically (temp file and rename).
func (p *Persistent) update(change func(map[ApprovalKey]time.Time) int) error {
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
	grants, err := readGrants(p.path)
	if err != nil {
		return err
	}
	if change(grants) == 0 {
		return nil
	}
	f := approvalsFile{Version: 1, Approvals: make([]Grant, 0, len(grants))}
	for k, t := range grants {
		f.Approvals = append(f.Approvals, Grant{k, t})
	}
	sortGrants(f.Approvals)
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p.path), ".approvals-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), p.path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return p.reload()
}
