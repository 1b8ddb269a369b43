package host

import "github.com/toolwarden/toolwarden/internal/audit"

// AskRecord is what the audit log keeps of one channel's part in an ask
// (event "channel"): which channel answered it and with what, which one
// was sent a notice, which failed or was withdrawn. The decision itself is
// the "check" record before it; an allow's scope is the "approve" record.
type AskRecord struct {
	// Ask is the ask's inbox id, when it was posted there.
	Ask    string `json:"ask,omitempty"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	App    string `json:"app,omitempty"`
	// Channel is "elicitation", "inbox", "webhook" or "none".
	Channel string `json:"channel"`
	// Outcome is "answered", "declined" or "cancelled" (the client ended
	// the prompt without an option: no Option), "posted", "sent", "failed",
	// "withdrawn", "expired" or "refused" (approval_channel = "none").
	Outcome string `json:"outcome"`
	// Option is the answer ("allow_once", "deny", ...), when answered;
	// By is where the answer was given when the channel knows ("inbox",
	// "webhook-link").
	Option string `json:"option,omitempty"`
	By     string `json:"by,omitempty"`
	Error  string `json:"error,omitempty"`
}

// RecordAsk writes r to the audit log, if there is one.
func (h *Host) RecordAsk(sessionID string, r AskRecord) {
	if h.audit != nil {
		h.audit.Write(audit.Record{Time: h.now(), Event: "channel", Session: sessionID, Decision: r})
	}
}
