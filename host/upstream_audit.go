package host

import "github.com/toolwarden/toolwarden/internal/audit"

// UpstreamFailure is a server a proxy fronts that could not be started,
// and why (the command not found, its exit status and stderr, a timeout).
type UpstreamFailure struct {
	Server  string `json:"server"`
	Command string `json:"command"`
	Error   string `json:"error"`
}

// UpstreamFailed records in the audit log (event "upstream") that a server
// could not be started: its tools are missing from the session's lists,
// and the log must say why rather than look like a server with no tools.
func (h *Host) UpstreamFailed(sessionID string, f UpstreamFailure) {
	if h.audit != nil {
		h.audit.Write(audit.Record{Time: h.now(), Event: "upstream", Session: sessionID, Decision: f})
	}
}
