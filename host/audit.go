package host

import "github.com/toolwarden/toolwarden/internal/audit"

// Audit writes a front end's event (an ask over a channel, a relayed
// request, a server that would not start) to the audit log, if there is
// one, in order with the host's own records.
func (h *Host) Audit(sessionID string, e audit.Event) {
	if h.audit != nil {
		h.audit.Write(audit.Record{Time: h.now(), Event: e.Name(), Session: sessionID, Decision: e})
	}
}
