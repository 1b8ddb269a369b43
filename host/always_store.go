package host

import "github.com/toolwarden/toolwarden/internal/session"

// AlwaysStore says where an "always" approval of session sessionID's
// calls counts when the user adds it by hand rather than in a prompt: ok
// when the host keeps them in a shared store (WithStore; an approvals
// file beside it is not read). url names the store as `toolwarden
// approvals --store` takes it, any password hidden ("" when the store
// does not say), and scope is whose calls Approve's grant would cover
// (the session caller's principal, else "local": the local front ends). A refusal's advice
// names both, so that the approval it suggests is one this host reads.
func (h *Host) AlwaysStore(sessionID string) (url string, scope session.GrantScope, ok bool) {
	if h.shared.st == nil {
		return "", session.GrantScope{}, false
	}
	if u, says := h.shared.st.(interface{ URL() string }); says {
		url = u.URL()
	}
	// An empty grant always resolves: the error is for named ones.
	scope, _ = h.grantScope(sessionID, session.GrantScope{})
	return url, scope, true
}
