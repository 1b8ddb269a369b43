package main

import (
	"context"
	"fmt"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/hook"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// observeHookCall handles an after-event (PostToolUse, AfterTool): the
// call already ran, and its before-event decided it, counted it in the
// session, reserved plugin state and wrote its "check" audit record. So
// the after-event does not decide it again: deciding runs every plugin's
// check (a second reservation) and counts and audits a second decision
// for one call. It only observes (plugins' observe event, labels, the
// "observe" audit record with the outcome) and, where Claude Code's dialog
// approved an ask, accepts the definition asked about as the new pin.
func observeHookCall(ctx context.Context, e *env, h *host.Host, sess *session.Session, ev *hook.Event, call host.Call) error {
	d, err := observedFacts(ctx, h, sess, call)
	if err != nil {
		return err
	}
	h.Observe(ctx, call, &d, host.Result{Text: responseText(ev.Response), IsError: ev.ResponseIsError()})
	if ev.HumanApproved(&d) {
		// As in the proxy, an approval (here, Claude Code's dialog)
		// accepts the definition it was asked about as the new pin.
		if err := h.Approve(ev.Session, &d, host.Once); err != nil {
			fmt.Fprintf(e.stderr, "toolwarden hook: warning: %v\n", err)
		}
	}
	return nil
}

// observedFacts is what observe needs of a call that already ran: its app,
// connector, effective hints and capabilities, as the config decides them
// now, and whether the config asks about it (for HumanApproved). It runs
// the pipeline without plugins, without counting and without auditing:
// a pure reading of the config (internal/policy), not a decision.
func observedFacts(ctx context.Context, h *host.Host, sess *session.Session, call host.Call) (host.Decision, error) {
	rules, err := policy.Compile(h.Config())
	if err != nil {
		return host.Decision{}, err
	}
	pinned, ok := sess.Pinned(call.Server, call.Tool.Name)
	return rules.Decide(ctx, &policy.Input{
		Session:   call.Session,
		Server:    call.Server,
		Tool:      call.Tool,
		Arguments: call.Arguments,
		Labels:    sess.Labels(),
		Drifted:   ok && pinned != call.Tool.HashHex,
		Approvals: sess,
		Context:   call.Context,
		NoTrace:   true,
	}), nil
}
