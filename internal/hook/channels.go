package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolwarden/toolwarden/internal/audit"
	"log/slog"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// Reason codes of an ask the hook settled itself, through the approval
// inbox or approval_channel = "none" (channel.Code, "no_approval_channel").
const (
	CodeApprovedInInbox = "approved_in_inbox"
	CodeDeniedInInbox   = "denied_in_inbox"
	CodeNoAnswer        = "no_answer"
)

// AskOptions are what settling an ask needs besides the decision.
type AskOptions struct {
	// Timeout bounds the wait for the inbox; 0: channel.HookTimeout.
	Timeout time.Duration
	// Log gets the channels' failures (a webhook that failed, ...).
	Log *slog.Logger
	// Release lets go of the session's lock before the wait, so that other
	// hook processes of the session go on; Reopen takes it again after
	// the wait, to remember an allow (save writes the session back).
	Release func()
	Reopen  func() (save func() error, err error)
	// PID is the process the agent ran for this event, when another one
	// decides it (toolwarden's warm process): the inbox names it as the
	// asker, and the ask is stale once it is gone. 0: this process.
	PID int
}

// Ask settles an ask (d.Decision == Ask) through the approval channels
// when approval_channel says so: "none" blocks the call; "inbox" and
// "both" post it to the approval inbox and wait for the answer (the
// agent's own dialog cannot be waited on from a hook, so "both" waits on
// the inbox), then allow or block. ok is false for "elicitation": the
// caller renders the ask as before and the agent asks (Claude Code's
// dialog; the webhook is told of it first). Webhook posts delay the
// answer by at most channel.HookWebhookGrace.
func Ask(ctx context.Context, h *host.Host, cfg *config.Config, ev *Event, d *host.Decision, o AskOptions) (out Output, ok bool) {
	set := cfg.ApprovalChannel(d.Server, d.App)
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = channel.HookTimeout
	}
	r := &channel.Runner{
		Setting: set,
		Webhook: cfg.Webhook,
		Log:     o.Log,
		Record:  func(a audit.Ask) { h.Audit(ev.Session, a) },
	}
	q := channel.NewQuestion(ev.ToolName, d, ev.Input, h.CanRememberAlways())
	switch set.Effective() {
	case config.ChannelNone, config.ChannelInbox, config.ChannelBoth:
	default:
		if ev.Agent == Claude {
			// The agent's own dialog asks (permissionDecision "ask"): the
			// webhook hears of it too. Agents that cannot ask get a deny,
			// which nobody is asked about.
			r.Tell(channel.Prompt{Origin: "hook", PID: o.PID, Session: ev.Session, Question: &q}, channel.Elicitation)
			r.FlushWithin(channel.HookWebhookGrace)
		} else {
			// The log says how the ask ended: denied, nobody asked.
			h.Audit(ev.Session, audit.Ask{Server: d.Server, Tool: d.Tool, App: d.App, Channel: audit.ChannelAgent, Outcome: "refused", Error: "this agent's hook cannot ask; the call was denied"})
		}
		return Output{}, false
	}
	if o.Release != nil && set.Effective() != config.ChannelNone {
		o.Release()
	}
	ans, err := r.Ask(ctx, channel.Prompt{Origin: "hook", PID: o.PID, Session: ev.Session, Question: &q, Timeout: timeout}, nil)
	r.FlushWithin(channel.HookWebhookGrace) // the process ends with its answer
	var refusal *channel.RefusedError
	switch {
	case errors.As(err, &refusal):
		return RenderRefused(ev.Agent, d, ev.Input, channel.Code, channel.Refusal(set)), true
	case errors.Is(err, channel.ErrTimeout):
		return RenderRefused(ev.Agent, d, ev.Input, CodeNoAnswer, fmt.Sprintf("nobody answered in the approval inbox within %s (toolwarden hook --approval-timeout), so the call is blocked", timeout)), true
	case err != nil:
		return RenderRefused(ev.Agent, d, ev.Input, CodeNoAnswer, fmt.Sprintf("asking in the approval inbox failed (%v), so the call is blocked", err)), true
	}
	scope, allow := channel.ScopeOf(ans.Option)
	if !allow {
		return RenderAnswered(ev.Agent, d, ev.Input, false, "the user denied this call in the approval inbox"), true
	}
	if err := remember(h, ev.Session, d, scope, o.Reopen); err != nil {
		return RenderRefused(ev.Agent, d, ev.Input, CodeNoAnswer, fmt.Sprintf("the approval from the inbox could not be recorded (%v), so the call is blocked", err)), true
	}
	return RenderAnswered(ev.Agent, d, ev.Input, true, fmt.Sprintf("approved in the approval inbox (%s)", ans.Option)), true
}

// remember records an allow in the session (taken again through reopen,
// when given) and saves it.
func remember(h *host.Host, session string, d *host.Decision, scope host.Scope, reopen func() (func() error, error)) error {
	save := func() error { return nil }
	if reopen != nil {
		var err error
		if save, err = reopen(); err != nil {
			return err
		}
	}
	if err := h.Approve(session, d, scope); err != nil {
		return err
	}
	return save()
}

// RenderAnswered is the agent's answer to a before-event whose ask a human
// answered outside the agent (in the approval inbox): allowed, or blocked.
// why says what was answered, where.
func RenderAnswered(agent Agent, d *policy.Decision, args json.RawMessage, allow bool, why string) Output {
	code, verdict := CodeDeniedInInbox, policy.Deny
	if allow {
		code, verdict = CodeApprovedInInbox, policy.Allow
	}
	return settled(agent, d, args, verdict, code, why)
}

// RenderRefused blocks a before-event whose ask nobody could answer: no
// approval channel, no answer in time, or a channel that failed. why says
// which, and what to do.
func RenderRefused(agent Agent, d *policy.Decision, args json.RawMessage, code, why string) Output {
	return settled(agent, d, args, policy.Deny, code, why)
}

// settled renders d as no longer an ask: no approval advice is added, the
// question was already put (or could not be).
func settled(agent Agent, d *policy.Decision, args json.RawMessage, verdict policy.Verdict, code, why string) Output {
	s := *d
	s.Decision = verdict
	s.Reasons = append(append([]policy.Reason(nil), d.Reasons...), policy.Reason{Code: code, Message: why})
	return Render(agent, &s, args)
}
