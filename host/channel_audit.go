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

// Until the front ends move to Audit (same change set).
type (
	AskRecord       = audit.Ask
	Relay           = audit.Relay
	UpstreamFailure = audit.UpstreamFailure
)

func (h *Host) RecordAsk(sessionID string, r AskRecord)            { h.Audit(sessionID, r) }
func (h *Host) Relayed(sessionID string, r Relay)                  { h.Audit(sessionID, r) }
func (h *Host) UpstreamFailed(sessionID string, f UpstreamFailure) { h.Audit(sessionID, f) }
