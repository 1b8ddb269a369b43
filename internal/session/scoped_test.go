package session_test

import (
	"testing"

	"github.com/toolwarden/toolwarden/internal/session"
)

// Scoped approvals are per session, one grant per answer, and a drifted
// definition drops them, as it drops unscoped approvals: a definition
// that comes back later is asked about again.
func TestScopedApprovalsAreGrantedPerAnswerAndDroppedOnDrift(t *testing.T) {
	t.Parallel()
	st := session.NewStore(nil)
	s := st.Get("s")
	key := session.ApprovalKey{App: "fs", Server: "fs", Tool: "write_file", Hash: "h1"}
	s.Pin("fs", "write_file", "h1")
	s.RememberScoped(session.ScopedApproval{Key: key, Plugin: "argguard", Code: "c", Arg: "/path", Glob: "/a/**"},
		session.ScopedApproval{Key: key, Plugin: "argguard", Code: "c", Arg: "/content", Regex: "^x$"})
	s.RememberScoped(session.ScopedApproval{Key: key, Plugin: "argguard", Code: "c", Arg: "/path", Glob: "/b/**"})
	var grants []uint64
	s.EachScoped(key, func(a session.ScopedApproval) bool { grants = append(grants, a.Grant); return true })
	if len(grants) != 3 || grants[0] != grants[1] || grants[1] == grants[2] {
		t.Fatalf("grants %v, want the first two shared and the third its own", grants)
	}
	if n := len(st.Get("other").ScopedApprovals()); n != 0 {
		t.Errorf("another session holds %d scoped approvals", n)
	}
	if !s.Pin("fs", "write_file", "h2") {
		t.Fatal("no drift")
	}
	if n := len(s.ScopedApprovals()); n != 0 {
		t.Errorf("%d scoped approvals survive the drift", n)
	}
}
