package session

import (
	"sort"
	"sync"
	"sync/atomic"
)

// ApprovalKey names what a remembered approval covers: one tool, of one app
// on one server (and connector), at one exact definition.
type ApprovalKey struct {
	App       string `json:"app"`
	Server    string `json:"server"`
	Connector string `json:"connector,omitempty"`
	Tool      string `json:"tool"`
	Hash      string `json:"definition_hash"`
}

type toolKey struct{ server, tool string }

// Session is one agent conversation's state. It is safe for concurrent use.
type Session struct {
	id string

	mu        sync.RWMutex
	approvals map[ApprovalKey]struct{}
	pins      map[toolKey]string
	labelSet  map[string]struct{}
	// labels is replaced, never mutated, so Labels can hand it out without
	// copying.
	labels []string

	// scoped are approvals scoped to arguments (scoped.go).
	scoped scoped

	// plugins holds each stateful plugin's state (pluginstate.go).
	plugins map[string]*PluginSlot

	calls, asks, denies atomic.Int64

	// changes counts what this process changed in the session's pins,
	// approvals, scoped approvals, labels and plugin states (not its
	// counters, and not what Restore or Absorb took from elsewhere): a
	// host sharing sessions through a store saves the session when it
	// moved (merge.go).
	changes atomic.Uint64

	// always, when set, also answers Remembered ("always" approvals). Its
	// grants are never copied into approvals: the file alone holds them,
	// so a revoke from any process takes effect in this session too.
	always *Persistent

	// Sessions are allocated side by side, and every decision writes its
	// session's lock and counters: without a cache line between them, one
	// session's counters could share a line with the next one's lock,
	// and two sessions deciding on two cores would pass it back and forth.
	_ [64]byte
}

func newSession(id string) *Session {
	return &Session{
		id:        id,
		approvals: map[ApprovalKey]struct{}{},
		pins:      map[toolKey]string{},
		labelSet:  map[string]struct{}{},
	}
}

// ID is the session's identifier.
func (s *Session) ID() string { return s.id }

// Remembered reports whether the session holds an approval for the key:
// one granted for this session (Remember), or an "always" approval in the
// approvals file as it is now. The two are kept apart: revoking an "always"
// approval leaves a session approval for the same key, which was a
// separate answer of the human, in place.
func (s *Session) Remembered(app, server, connector, tool, hash string) bool {
	s.mu.RLock()
	_, ok := s.approvals[ApprovalKey{app, server, connector, tool, hash}]
	s.mu.RUnlock()
	if !ok && s.always != nil {
		ok = s.always.Remembered(app, server, connector, tool, hash)
	}
	return ok
}

// RememberedForSession reports whether the session itself holds an
// approval for the key, leaving the approvals file aside: it tells a
// session answer from an "always" one in the reason of a decision.
func (s *Session) RememberedForSession(app, server, connector, tool, hash string) bool {
	s.mu.RLock()
	_, ok := s.approvals[ApprovalKey{app, server, connector, tool, hash}]
	s.mu.RUnlock()
	return ok
}

// Remember stores a session-scoped approval. "Always" approvals go to the
// approvals file instead (Persistent.Add), never here.
func (s *Session) Remember(k ApprovalKey) {
	s.mu.Lock()
	s.approvals[k] = struct{}{}
	s.mu.Unlock()
	s.changes.Add(1)
}

// Approvals lists the session's remembered approvals, sorted.
func (s *Session) Approvals() []ApprovalKey {
	s.mu.RLock()
	out := make([]ApprovalKey, 0, len(s.approvals))
	for k := range s.approvals {
		out = append(out, k)
	}
	s.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Server != b.Server {
			return a.Server < b.Server
		}
		if a.Tool != b.Tool {
			return a.Tool < b.Tool
		}
		return a.Hash < b.Hash
	})
	return out
}

// Pin records hash as the definition of (server, tool) if none is pinned yet,
// and reports whether the given hash differs from the pin (drift). On the
// first sight of a drift it drops every approval for that tool: a changed
// definition is a rug pull until the user approves it.
func (s *Session) Pin(server, tool, hash string) (drifted bool) {
	k := toolKey{server, tool}
	s.mu.RLock()
	pinned, ok := s.pins[k]
	s.mu.RUnlock()
	if ok && pinned == hash {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pinned, ok = s.pins[k]
	if !ok {
		s.pins[k] = hash
		s.changes.Add(1)
		return false
	}
	if pinned == hash {
		return false
	}
	s.dropApprovalsLocked(server, tool)
	s.changes.Add(1)
	return true
}

// Repin accepts hash as the new definition of (server, tool), as when the
// user approves a drifted tool.
func (s *Session) Repin(server, tool, hash string) {
	s.mu.Lock()
	if s.pins[toolKey{server, tool}] != hash {
		s.dropApprovalsLocked(server, tool)
		s.pins[toolKey{server, tool}] = hash
		s.changes.Add(1)
	}
	s.mu.Unlock()
}

// Pinned returns the pinned hash of (server, tool), if any.
func (s *Session) Pinned(server, tool string) (string, bool) {
	s.mu.RLock()
	h, ok := s.pins[toolKey{server, tool}]
	s.mu.RUnlock()
	return h, ok
}

func (s *Session) dropApprovalsLocked(server, tool string) {
	s.dropScoped(server, tool)
	for k := range s.approvals {
		if k.Server == server && k.Tool == tool {
			delete(s.approvals, k)
		}
	}
}

// Labels returns the session's labels in the order they were added. The
// slice is shared: callers must not modify it.
func (s *Session) Labels() []string {
	s.mu.RLock()
	l := s.labels
	s.mu.RUnlock()
	return l
}

// HasLabel reports whether the session carries label.
func (s *Session) HasLabel(label string) bool {
	s.mu.RLock()
	_, ok := s.labelSet[label]
	s.mu.RUnlock()
	return ok
}

// AddLabels adds labels (taint) to the session and reports which were new.
func (s *Session) AddLabels(labels ...string) (added []string) {
	return s.addLabels(labels, true)
}

// addLabels adds labels; mine says whether they are this process's change
// (Changes) or another's, brought in by Absorb.
func (s *Session) addLabels(labels []string, mine bool) (added []string) {
	if len(labels) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var next []string
	for _, l := range labels {
		if l == "" {
			continue
		}
		if _, ok := s.labelSet[l]; ok {
			continue
		}
		if next == nil {
			next = make([]string, len(s.labels), len(s.labels)+len(labels))
			copy(next, s.labels)
		}
		s.labelSet[l] = struct{}{}
		next = append(next, l)
		added = append(added, l)
	}
	if next != nil {
		s.labels = next
		if mine {
			s.changes.Add(1)
		}
	}
	return added
}

// Counters are a session's call statistics.
type Counters struct {
	Calls  int64 `json:"calls"`
	Asks   int64 `json:"asks"`
	Denies int64 `json:"denies"`
}

// Count records one decision: ask and deny are counted apart.
func (s *Session) Count(ask, deny bool) {
	s.calls.Add(1)
	if ask {
		s.asks.Add(1)
	}
	if deny {
		s.denies.Add(1)
	}
}

// Counters returns the session's statistics so far.
func (s *Session) Counters() Counters {
	return Counters{Calls: s.calls.Load(), Asks: s.asks.Load(), Denies: s.denies.Load()}
}

// Store holds every live session, keyed by ID. It is safe for concurrent use.
//
// Finding a session is a sync.Map load, which writes nothing shared: a read
// lock, which every decision took, writes the lock's reader count, a cache
// line that two cores deciding at once then pass back and forth. Creating
// and ending sessions are serialised by mu.
type Store struct {
	sessions sync.Map // string -> *Session
	mu       sync.Mutex
	always   *Persistent
}

// NewStore returns an empty store. When always is not nil, every session
// also honours its persistent approvals.
func NewStore(always *Persistent) *Store {
	return &Store{always: always}
}

// Get returns the session with id, creating it on first use.
func (st *Store) Get(id string) *Session {
	if s, ok := st.sessions.Load(id); ok {
		return s.(*Session)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if s, ok := st.sessions.Load(id); ok {
		return s.(*Session)
	}
	s := newSession(id)
	s.always = st.always
	st.sessions.Store(id, s)
	return s
}

// Lookup returns the session with id if it exists.
func (st *Store) Lookup(id string) (*Session, bool) {
	s, ok := st.sessions.Load(id)
	if !ok {
		return nil, false
	}
	return s.(*Session), true
}

// End forgets a session (its client disconnected).
func (st *Store) End(id string) {
	st.mu.Lock()
	st.sessions.Delete(id)
	st.mu.Unlock()
}
