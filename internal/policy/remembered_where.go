package policy

// sessionApprovals is implemented by approval stores that keep the answers
// given for this session apart from the "always" approvals of the
// approvals file (internal/session.Session), so that a reason can say which of
// the human's answers let the call through.
type sessionApprovals interface {
	RememberedForSession(app, server, connector, tool, hash string) bool
}

// alwaysWhere is implemented by approvals whose "always" approvals are
// kept elsewhere than the approvals file (a store shared by several
// processes, host/store.go): it says where, and whose calls they cover.
type alwaysWhere interface {
	AlwaysWhere() (message, detail string)
}

// Reasons of a host that keeps its state in a shared store (host/store.go).
const (
	// StepStore is the shared store: a step of its own, before and after
	// the pipeline, when the store could not be read or written.
	StepStore = "store"
	// CodeStoreUnreachable denies a call the host could not decide on
	// current state: the session's state could not be loaded from the
	// shared store, or what the call changed could not be saved there.
	CodeStoreUnreachable = "store_unreachable"
	// CodeRememberedUnconfirmed says why an ask was not lifted by a
	// remembered "always" approval: the shared store could not confirm
	// that what it holds is current, so they were set aside.
	CodeRememberedUnconfirmed = "remembered_unconfirmed"
)

// rememberedWhere is what a remembered allow says of the approval that let
// d through: the reason's message and the trace step's detail, each
// spelled once per place an approval is kept, so that an allow by a
// remembered approval (the call a human approved for the session, made
// again and again) allocates nothing. The definition it matches is the
// decision's own DefinitionHash. It runs only when an approval matched, so
// the second lookup costs nothing on the paths that ask or deny.
func rememberedWhere(a Approvals, d *Decision) (message, detail string) {
	s, ok := a.(sessionApprovals)
	switch {
	case !ok:
		return "approved earlier (this session or always) for this exact definition",
			"an approval (this session or always) matches this exact definition"
	case s.RememberedForSession(d.App, d.Server, d.Connector, d.Tool, d.DefinitionHash):
		return "approved earlier in this session for this exact definition",
			"an approval in this session matches this exact definition"
	default:
		if w, ok := a.(alwaysWhere); ok {
			return w.AlwaysWhere()
		}
		return `approved earlier with "always" (the approvals file) for this exact definition`,
			`an "always" approval (the approvals file) matches this exact definition`
	}
}
