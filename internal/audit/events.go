package audit

import "time"

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
	// Channel is "elicitation", "inbox", "webhook", "none" or "agent"
	// (ChannelAgent).
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

// ChannelAgent is the Ask channel of an agent's hook that cannot ask
// (Gemini CLI, Codex under approval_channel "elicitation"): its "refused"
// record says the call was denied with nobody asked.
const ChannelAgent = "agent"

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

// Revoke is a standing ("always") approval taken back (event "revoke"):
// the next call of that tool is asked about again. By is where it was
// revoked: "cli" (toolwarden approvals) or "inbox" (the page). All says
// every approval of File went at once (approvals reset, revoke --all),
// with no key.
type Revoke struct {
	Server         string `json:"server,omitempty"`
	Tool           string `json:"tool,omitempty"`
	App            string `json:"app,omitempty"`
	Connector      string `json:"connector,omitempty"`
	DefinitionHash string `json:"definition_hash,omitempty"`
	All            bool   `json:"all,omitempty"`
	File           string `json:"file"`
	By             string `json:"by"`
}

// Name is "revoke".
func (Revoke) Name() string { return "revoke" }

// WriteEvent appends a front end's event outside any host (a revoke from
// the command line or the page), in the shape host.Host.Audit writes.
func (l *Log) WriteEvent(session string, e Event) {
	l.Write(Record{Time: time.Now().UTC(), Event: e.Name(), Session: session, Decision: e})
}
