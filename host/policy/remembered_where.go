package policy

// sessionApprovals is implemented by approval stores that keep the answers
// given for this session apart from the "always" approvals of the
// approvals file (host/session.Session), so that a reason can say which of
// the human's answers let the call through.
type sessionApprovals interface {
	RememberedForSession(app, server, connector, tool, hash string) bool
}

// rememberedWhere names where the approval that allowed d was found. It
// runs only when an approval matched, so the second lookup costs nothing
// on the paths that ask or deny.
func rememberedWhere(a Approvals, d *Decision) string {
	s, ok := a.(sessionApprovals)
	switch {
	case !ok:
		return "(this session or always)"
	case s.RememberedForSession(d.App, d.Server, d.Connector, d.Tool, d.DefinitionHash):
		return "in this session"
	default:
		return "with \"always\" (the approvals file)"
	}
}
