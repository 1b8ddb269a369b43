package session

import "sync"

// ScopedApproval is an approval the human scoped to arguments: calls of
// the definition Key whose argument at Arg matches Glob or Regex, asked by
// the plugin Plugin with reason Code (internal/policy's scope_remember.go says
// how it is matched).
type ScopedApproval struct {
	// Grant tells answers apart: the scopes one answer approved share it
	// (RememberScoped sets it).
	Grant  uint64      `json:"grant"`
	Key    ApprovalKey `json:"key"`
	Plugin string      `json:"plugin"`
	Code   string      `json:"code"`
	Arg    string      `json:"arg"`
	Glob   string      `json:"glob,omitempty"`
	Regex  string      `json:"regex,omitempty"`
}

// scoped holds a session's scoped approvals, by definition. It has its own
// lock so that the session's other state is not held while a scope is
// matched against a call.
type scoped struct {
	mu     sync.RWMutex
	by     map[ApprovalKey][]ScopedApproval
	grants uint64
}

// RememberScoped stores the scopes one answer approved, as one grant: a
// later call is lifted only by scopes of a single grant (internal/policy).
func (s *Session) RememberScoped(list ...ScopedApproval) {
	s.scoped.mu.Lock()
	defer s.scoped.mu.Unlock()
	if s.scoped.by == nil {
		s.scoped.by = map[ApprovalKey][]ScopedApproval{}
	}
	s.scoped.grants++
	for _, a := range list {
		a.Grant = s.scoped.grants
		s.scoped.by[a.Key] = append(s.scoped.by[a.Key], a)
	}
	s.changes.Add(1)
}

// EachScoped calls f with each scoped approval of the definition until f
// returns false.
func (s *Session) EachScoped(k ApprovalKey, f func(ScopedApproval) bool) {
	s.scoped.mu.RLock()
	list := s.scoped.by[k]
	s.scoped.mu.RUnlock()
	for _, a := range list { // appended only: a snapshot is safe to read
		if !f(a) {
			return
		}
	}
}

// ScopedApprovals lists the session's scoped approvals.
func (s *Session) ScopedApprovals() []ScopedApproval {
	s.scoped.mu.RLock()
	defer s.scoped.mu.RUnlock()
	var out []ScopedApproval
	for _, list := range s.scoped.by {
		out = append(out, list...)
	}
	return out
}

// dropScoped forgets the scoped approvals of a tool (its definition drifted).
func (s *Session) dropScoped(server, tool string) {
	s.scoped.mu.Lock()
	for k := range s.scoped.by {
		if k.Server == server && k.Tool == tool {
			delete(s.scoped.by, k)
		}
	}
	s.scoped.mu.Unlock()
}
