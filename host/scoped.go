package host

import (
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// sessionApprovals is a session as the pipeline reads its approvals: the
// unscoped ones (step 6) and, through policy.ScopedApprovals, the ones a
// human scoped to arguments. The session package stays below policy, so
// the scopes cross as plain fields here.
type sessionApprovals struct{ *session.Session }

func (a sessionApprovals) EachScope(app, server, connector, tool, hash string, f func(grant uint64, plugin, code string, s policy.Scope) bool) {
	key := session.ApprovalKey{App: app, Server: server, Connector: connector, Tool: tool, Hash: hash}
	a.EachScoped(key, func(g session.ScopedApproval) bool {
		return f(g.Grant, g.Plugin, g.Code, policy.Scope{Arg: g.Arg, Glob: g.Glob, Regex: g.Regex})
	})
}

// scopedApprovals are what a ForSessionScoped answer stores: one per scope
// the decision offered, bound to its definition.
func scopedApprovals(key session.ApprovalKey, scopes []policy.ProposedScope) []session.ScopedApproval {
	out := make([]session.ScopedApproval, len(scopes))
	for i, s := range scopes {
		out[i] = session.ScopedApproval{Key: key, Plugin: s.Plugin, Code: s.Code, Arg: s.Arg, Glob: s.Glob, Regex: s.Regex}
	}
	return out
}
