package sdk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/toolresult"
)

// Approver answers asks: the agent shows the Question in its own UI and
// returns the answer the human chose. It is called from the goroutine that
// made the call, and may be called from several at once.
//
// An error, a cancelled ctx, or an answer that was not among the
// question's Options denies the call.
type Approver interface {
	Approve(ctx context.Context, q *Question) (Answer, error)
}

// ApproverFunc makes a function an Approver.
type ApproverFunc func(ctx context.Context, q *Question) (Answer, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, q *Question) (Answer, error) { return f(ctx, q) }

// Answer is the option the human chose.
type Answer string

// The answers a question may offer.
const (
	AllowOnce    Answer = policy.OptionAllowOnce
	AllowSession Answer = policy.OptionAllowSession
	AllowAlways  Answer = policy.OptionAlways
	// AllowSessionScoped remembers the approval for this session, for
	// calls inside the question's Scope only.
	AllowSessionScoped Answer = policy.OptionAllowSessionScoped
	Deny               Answer = policy.OptionDeny
)

// scope is how long an allow lasts; ok is false for Deny and for anything
// that is not an answer.
func (a Answer) scope() (host.Scope, bool) { return channel.ScopeOf(string(a)) }

// Title is how a UI labels the answer: the words every channel shows for
// the option. AllowSessionScoped's title names no scope here (the
// question's Scope does).
func (a Answer) Title() string {
	if a == AllowSessionScoped {
		return "Allow for this session, inside the question's scope"
	}
	return channel.Label(string(a))
}

// Question is one ask, as the agent shows it to the human.
type Question struct {
	// Session is the conversation the call belongs to.
	Session string
	// Server is the [mcp_servers.<name>] key; Tool the tool's name on it.
	Server, Tool string
	// Reasons say why the call needs approval.
	Reasons []policy.Reason
	// Hints are the tool's effective hints (what policy believed).
	Hints hints.Set
	// Arguments are the call's arguments, exactly as they will be sent.
	Arguments json.RawMessage
	// Flagged are the arguments the deciding rules are about, as JSON
	// pointers ("/path"): a UI that lays arguments out itself shows these
	// first and never cuts them.
	Flagged []string
	// Text is the whole question as toolwarden's proxy shows it: title,
	// tool, reasons, hints, warnings, and the arguments rendered so that
	// none hides another. Showing Text is enough; the other fields are
	// there for a UI that lays the question out itself.
	Text string
	// Drifted says the tool's definition changed since the conversation
	// first saw it.
	Drifted bool
	// Scope describes what AllowSessionScoped remembers ("path under
	// /repo/docs/**"), when it is among Options: later calls inside it run
	// without asking, others are asked again.
	Scope string
	// Options are the answers allowed, narrowest first; Deny is always
	// among them. Any other answer denies the call.
	Options []Answer
	// Decision is the host's decision, for a UI that wants everything.
	Decision *host.Decision
}

// Offers reports whether a is among the question's options.
func (q *Question) Offers(a Answer) bool {
	for _, o := range q.Options {
		if o == a {
			return true
		}
	}
	return false
}

// DenyAll is an Approver for runs without a human: every ask is denied,
// with a *NoOneAskedError, so the model reads that no one was asked and
// how the call can be allowed, not that a person refused it.
var DenyAll Approver = ApproverFunc(func(_ context.Context, q *Question) (Answer, error) {
	return Deny, &NoOneAskedError{Server: q.Server, Tool: q.Tool}
})

// NoOneAskedError is DenyAll's answer: the ask was denied without being
// shown to anyone.
type NoOneAskedError struct {
	Server, Tool string
}

func (e *NoOneAskedError) Error() string {
	where := "[mcp_servers.<server>.tools.\"<tool>\"]"
	if e.Server != "" && e.Tool != "" {
		where = fmt.Sprintf("[mcp_servers.%s.tools.%q]", e.Server, e.Tool)
	}
	return "no one was asked: " + noOneAskedInstead + ". " +
		"To allow the call, set approval_mode = \"approve\" in " + where + " of the toolwarden config, " +
		"or " + noOneAskedFirst + " or with approval_channel = \"inbox\""
}

// What a guarded call denied by a *NoOneAskedError tells the model, in
// toolresult.NoOneAsked's words (the proxy's and the hooks'): what answered
// instead of a person, and the first way to allow the call.
const (
	noOneAskedInstead = "this agent answers every approval question with sdk.DenyAll"
	noOneAskedFirst   = "run the agent with an approver that asks a person (sdk.WithApprover, e.g. sdk.OpenTerminal)"
)

// approvals is where an "always" approval counts for the guard's host
// (its shared store or its approvals file), which a refusal names in its
// advice. The guard has no caller, so the grant's scope is the same for
// every session.
func (g *Guard) approvals() toolresult.Always {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return toolresult.AlwaysFor(g.h, "")
}

// Fixed is an Approver for runs without a human (CI): it gives answer to
// every question that offers it, and the narrowest allow offered when it
// does not (AllowOnce when "always" or "session" cannot be remembered).
// Fixed(Deny) is DenyAll.
func Fixed(answer Answer) Approver {
	return ApproverFunc(func(ctx context.Context, q *Question) (Answer, error) {
		if answer == Deny {
			return DenyAll.Approve(ctx, q)
		}
		if q.Offers(answer) {
			return answer, nil
		}
		if q.Offers(AllowOnce) {
			return AllowOnce, nil
		}
		return Deny, nil
	})
}

// ParseAnswer reads an answer as a flag gives it: "once", "session",
// "always", "deny", or an option name ("allow_once", ...).
func ParseAnswer(s string) (Answer, error) {
	switch s {
	case "once", string(AllowOnce):
		return AllowOnce, nil
	case "session", string(AllowSession):
		return AllowSession, nil
	case string(AllowAlways):
		return AllowAlways, nil
	case "session_scoped", string(AllowSessionScoped):
		return AllowSessionScoped, nil
	case "deny", "no":
		return Deny, nil
	}
	return Deny, fmt.Errorf("unknown answer %q (want once, session, always or deny)", s)
}
