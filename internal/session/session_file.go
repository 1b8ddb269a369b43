package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// State is a session's persistable state. Hook mode runs one process per
// tool call, so its sessions live in files between calls.
type State struct {
	Version   int           `json:"version"`
	ID        string        `json:"id"`
	Pins      []PinState    `json:"pins,omitempty"`
	Approvals []ApprovalKey `json:"approvals,omitempty"`
	Labels    []string      `json:"labels,omitempty"`
	Counters  Counters      `json:"counters"`
	// Plugins is each plugin's state (counters and entries), by policy name.
	Plugins map[string]PluginState `json:"plugins,omitempty"`
	// Scoped are the approvals a human scoped to arguments; the ones one
	// answer approved share their Grant.
	Scoped []ScopedApproval `json:"scoped,omitempty"`
}

// PinState is one pinned definition.
type PinState struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
	Hash   string `json:"definition_hash"`
}

// Snapshot returns the session's state.
func (s *Session) Snapshot() State {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := State{Version: 1, ID: s.id, Labels: append([]string(nil), s.labels...), Counters: s.Counters()}
	st.Plugins = s.pluginStatesLocked()
	for k, h := range s.pins {
		st.Pins = append(st.Pins, PinState{Server: k.server, Tool: k.tool, Hash: h})
	}
	sort.Slice(st.Pins, func(i, j int) bool {
		if st.Pins[i].Server != st.Pins[j].Server {
			return st.Pins[i].Server < st.Pins[j].Server
		}
		return st.Pins[i].Tool < st.Pins[j].Tool
	})
	for k := range s.approvals {
		st.Approvals = append(st.Approvals, k)
	}
	sort.Slice(st.Approvals, func(i, j int) bool {
		return st.Approvals[i].Tool+st.Approvals[i].Hash < st.Approvals[j].Tool+st.Approvals[j].Hash
	})
	st.Scoped = s.ScopedApprovals()
	sortScoped(st.Scoped)
	return st
}

// Restore replaces the session's state with st (its ID is kept).
func (s *Session) Restore(st State) {
	s.mu.Lock()
	s.pins = make(map[toolKey]string, len(st.Pins))
	for _, p := range st.Pins {
		s.pins[toolKey{p.Server, p.Tool}] = p.Hash
	}
	s.approvals = make(map[ApprovalKey]struct{}, len(st.Approvals))
	for _, a := range st.Approvals {
		s.approvals[a] = struct{}{}
	}
	s.labels = nil
	s.labelSet = map[string]struct{}{}
	s.restorePluginsLocked(st.Plugins)
	s.restoreScoped(st.Scoped)
	s.mu.Unlock()
	s.AddLabels(st.Labels...)
	s.calls.Store(st.Counters.Calls)
	s.asks.Store(st.Counters.Asks)
	s.denies.Store(st.Counters.Denies)
}

// FileLock holds a session file locked for one process while it decides.
type FileLock struct {
	path string
	lock *os.File
}

// OpenFile loads session id from dir into the store (creating it when the
// file does not exist) and locks the file until Close. Concurrent hook
// processes for the same session therefore decide one after another.
func (st *Store) OpenFile(dir, id string) (*Session, *FileLock, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return nil, nil, fmt.Errorf("session id %q cannot name a file", id)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	path := filepath.Join(dir, id+".json")
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, nil, err
	}
	if err := lockFile(lock); err != nil {
		lock.Close()
		return nil, nil, err
	}
	s := st.Get(id)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		lock.Close()
		return nil, nil, err
	default:
		state, err := decodeState(data)
		if err != nil {
			// Starting afresh would forget the session's taint labels and
			// plugin budgets, which lets through what the session had
			// earned a block for; overwriting the file would destroy it.
			// So the file is left as it is and the caller fails closed.
			lock.Close()
			return nil, nil, &CorruptFileError{Path: path, Err: err}
		}
		s.Restore(state)
	}
	return s, &FileLock{path: path, lock: lock}, nil
}

// CorruptFileError is a session file that cannot be used. The file is
// left untouched; every decision in that session fails closed until it is
// repaired or removed.
type CorruptFileError struct {
	Path string
	Err  error
}

func (e *CorruptFileError) Error() string {
	return fmt.Sprintf("session file %s cannot be used (%v): it is kept as it is and calls in this session are blocked, since starting afresh would forget the session's taint and plugin state; move the file away to start the session over", e.Path, e.Err)
}

func (e *CorruptFileError) Unwrap() error { return e.Err }

// maxStateFile bounds a session file: a session holds a few hundred pins
// and labels and at most MaxStateKeys small entries per plugin.
const maxStateFile = 8 << 20

// decodeState reads a session file, holding its plugin states to the
// bounds an update must keep: a file edited or damaged past them is not
// loaded.
func decodeState(data []byte) (State, error) {
	var st State
	if len(data) > maxStateFile {
		return st, fmt.Errorf("%d bytes, over the bound of %d", len(data), maxStateFile)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return State{}, err
	}
	if st.Version != 1 {
		return State{}, fmt.Errorf("version %d, want 1", st.Version)
	}
	for name, ps := range st.Plugins {
		if err := checkPluginState(ps); err != nil {
			return State{}, fmt.Errorf("plugin %q: %v", name, err)
		}
	}
	return st, nil
}

// Save writes the session's state back to its file.
func (l *FileLock) Save(s *Session) error {
	data, err := json.Marshal(s.Snapshot())
	if err != nil {
		return err
	}
	tmp := l.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, l.path)
}

// Close releases the lock.
func (l *FileLock) Close() error {
	unlockFile(l.lock) //nolint:errcheck
	return l.lock.Close()
}
