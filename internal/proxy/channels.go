package proxy

import (
	"context"
	"errors"
	"github.com/toolwarden/toolwarden/internal/audit"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/toolresult"
)

// channels is the runner for an ask about d under the config deciding now
// (approval_channel, most specific first, and [webhook]).
func (p *Proxy) channels(d *host.Decision) *channel.Runner {
	cfg := p.h.Config()
	return &channel.Runner{
		Setting: cfg.ApprovalChannel(d.Server, d.App),
		Webhook: cfg.Webhook,
		Log:     p.log,
		Record:  func(a audit.Ask) { p.h.Audit(p.session, a) },
	}
}

// origin names this process for the inbox: wrap serves one server under
// its own names, proxy namespaces several.
func (p *Proxy) origin() string {
	if p.opts.namespace {
		return "proxy"
	}
	return "wrap"
}

// askChannels puts the question to every configured channel and applies
// the first answer, while the client hears progress (keepAlive); the ask
// may outlive a call the client gives up on (askKept). canElicit is false when the client cannot (or the
// channel does not) elicit: the inbox is then waited on alone.
func (p *Proxy) askChannels(ctx context.Context, rt *route, call host.Call, d *host.Decision, req *callRequest, q *channel.Question, r *channel.Runner, canElicit bool) outcome {
	var el channel.Elicit
	if canElicit {
		el = func(ctx context.Context) (string, error) {
			p.mu.RLock()
			srv, sess := p.srv, p.sessCtx
			p.mu.RUnlock()
			ectx, cancel := context.WithCancel(sess)
			defer cancel()
			// Another channel answering cancels ctx: the prompt is withdrawn.
			defer context.AfterFunc(ctx, cancel)()
			res, err := srv.RequestElicitation(ectx, mcp.ElicitationRequest{
				Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
				Params:  q.ParamsFor(p.down.version),
			})
			if err != nil {
				return "", err
			}
			if toolresult.Ended(res) {
				return "", &channel.EndedError{Outcome: endedOutcome(res.Action)}
			}
			return q.Elicited(res)
		}
	}
	prompt := channel.Prompt{Origin: p.origin(), Session: p.session, Question: q, Timeout: p.opts.approvalTimeout}
	stop := p.keepAlive(req, rt.name)
	ans, err := p.askKept(ctx, call, d, func(ctx context.Context) (channel.Answer, error) { return r.Ask(ctx, prompt, el) })
	stop()
	var refusal *channel.RefusedError
	switch {
	case err == nil:
		if ans.Ended != "" {
			return made(p.unanswered(rt, d, endedAction(ans.Ended)))
		}
		return p.choose(ctx, rt, call, d, ans.Option)
	case errors.As(err, &refusal):
		return made(noChannel(rt, refusal.Setting))
	case errors.Is(err, channel.ErrNoChannel):
		// No channel asks anyone, but the ask is still an ask: the
		// webhook hears of it (with no channel to wait on).
		prompt.Timeout = 0
		r.Tell(prompt)
		return made(p.needsApproval(rt, d))
	case errors.Is(err, channel.ErrTimeout):
		return made(toolError("toolwarden: %s was not approved: no answer within %s (asked through %s), so it was denied.", rt.name, p.opts.approvalTimeout, r.Setting.Where()))
	}
	return made(toolError("toolwarden: %s needs approval, but asking failed: %v; the call was not made.", rt.name, err))
}

// noChannel is the deny of an ask under approval_channel = "none".
func noChannel(rt *route, s config.ChannelSetting) *mcp.CallToolResult {
	return toolresult.Error("toolwarden denied this call to %s: %s [%s]", rt.name, channel.Refusal(s), channel.Code)
}

// endedOutcome is the audit outcome of a prompt the client ended with
// action (decline or cancel).
func endedOutcome(action mcp.ElicitationResponseAction) string {
	if action == mcp.ElicitationResponseActionDecline {
		return channel.Declined
	}
	return channel.Cancelled
}

// endedAction is the MCP action an ended outcome came from.
func endedAction(outcome string) mcp.ElicitationResponseAction {
	if outcome == channel.Declined {
		return mcp.ElicitationResponseActionDecline
	}
	return mcp.ElicitationResponseActionCancel
}

// tellInputRequest tells the webhook of an ask put to a 2026-07-28 client
// as an input request: the answer comes back on a retry, which the
// channel runner cannot wait for, so the runner only posts it. The
// request state keeps its own clock, so no expiry is given.
func (p *Proxy) tellInputRequest(r *channel.Runner, q *channel.Question) {
	r.Tell(channel.Prompt{Origin: p.origin(), Session: p.session, Question: q}, channel.Elicitation)
}
