package audit

// An Event is a front end's record of what it did around the engine's
// decisions: an ask carried over a channel, a request relayed between a
// server and its client, a server that would not start. The engine writes
// its own records (check, observe, approve, reload); a front end hands it
// an Event (host.Host.Audit) to write in the same log, in order with them.
type Event interface {
	// Name is the record's "event" field.
	Name() string
}

// Ask is one channel's part in an ask (event "channel"): which channel
// answered it and with what, which one was sent a notice, which failed or
// was withdrawn. The decision itself is the "check" record before it; an
// allow's scope is the "approve" record.
type Ask struct {
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

// Name is "channel".
func (Ask) Name() string { return "channel" }

// Relay is a request a server made of the client that a proxy relayed
// (sampling, elicitation, roots), and how it ended: "answered", "error"
// (the client answered with one), "withdrawn" (by the server) or "refused"
// (by the proxy). Policy does not decide these requests, but a server that
// asks the client's model or human something is part of what a session
// did.
type Relay struct {
	Server  string `json:"server"`
	Method  string `json:"method"`
	Outcome string `json:"outcome"`
}

// Name is "relay".
func (Relay) Name() string { return "relay" }

// UpstreamFailure is a server a proxy fronts that could not be started,
// and why (the command not found, its exit status and stderr, a timeout):
// its tools are missing from the session's lists, and the log must say why
// rather than look like a server with no tools.
type UpstreamFailure struct {
	Server  string `json:"server"`
	Command string `json:"command"`
	Error   string `json:"error"`
}

// Name is "upstream".
func (UpstreamFailure) Name() string { return "upstream" }
