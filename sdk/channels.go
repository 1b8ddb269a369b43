package sdk

import (
	"context"
	"errors"
	"github.com/toolwarden/toolwarden/internal/audit"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/toolresult"
)

// WithApprovalTimeout bounds how long a call waits for an answer when the
// config's approval_channel puts asks in the approval inbox; no answer in
// time is a deny. Default: channel.DefaultTimeout (50 s), below the 60 s
// clients commonly give a tool call.
func WithApprovalTimeout(d time.Duration) Option { return func(g *Guard) { g.approvalTimeout = d } }

// Inbox is an Approver that puts every question in the approval inbox
// (the page `toolwarden inbox` serves, shared by every toolwarden process
// of the user) and returns the answer given there, or Deny when none comes
// within timeout (0: 50 s) or ctx ends. The question is
// withdrawn from the inbox once the call stops waiting.
//
// A Guard also uses the inbox without it when the config says so:
// approval_channel = "inbox" (the inbox alone) or "both" (the inbox and
// the guard's approver; the first answer wins).
func Inbox(timeout time.Duration) Approver {
	if timeout <= 0 {
		timeout = channel.DefaultTimeout
	}
	r := &channel.Runner{Setting: config.ChannelSetting{Value: config.ChannelInbox}}
	return ApproverFunc(func(ctx context.Context, q *Question) (Answer, error) {
		ans, err := r.Ask(ctx, channel.Prompt{Origin: "sdk", Session: q.Session, Question: approvalQuestion(q), Timeout: timeout}, nil)
		if err != nil {
			return Deny, err
		}
		return Answer(ans.Option), nil
	})
}

// approvalQuestion is q as the channels render it, offering q's options.
func approvalQuestion(q *Question) *channel.Question {
	aq := channel.NewQuestion(q.Tool, q.Decision, q.Arguments, true)
	aq.Drifted = q.Drifted
	aq.Options = aq.Options[:0]
	for _, o := range q.Options {
		aq.Options = append(aq.Options, string(o))
	}
	return &aq
}

// channels is the runner for an ask about d under the host's config.
func (g *Guard) channels(h *host.Host, sessionID string, d *host.Decision) *channel.Runner {
	cfg := h.Config()
	return &channel.Runner{
		Setting: cfg.ApprovalChannel(d.Server, d.App),
		Webhook: cfg.Webhook,
		Record:  func(a audit.Ask) { g.use(func(h *host.Host) { h.Audit(sessionID, a) }) },
	}
}

// askChannels puts q to the configured channels, the guard's approver
// standing for elicitation, and returns the first answer, or the refusal
// when there is none.
func (s *Session) askChannels(ctx context.Context, name string, q *Question, r *channel.Runner) (Answer, *mcp.CallToolResult) {
	g := s.g
	var el channel.Elicit
	if g.approver != nil {
		el = func(ctx context.Context) (string, error) {
			a, err := g.approver.Approve(ctx, q)
			return string(a), err
		}
	}
	timeout := g.approvalTimeout
	if timeout <= 0 {
		timeout = channel.DefaultTimeout
	}
	ans, err := r.Ask(ctx, channel.Prompt{Origin: "sdk", Session: s.id, Question: approvalQuestion(q), Timeout: timeout}, el)
	var refusal *channel.RefusedError
	switch {
	case err == nil:
		return Answer(ans.Option), nil
	case errors.As(err, &refusal):
		return Deny, toolresult.Error("toolwarden denied this call to %s: %s [%s]", name, channel.Refusal(refusal.Setting), channel.Code)
	case errors.Is(err, channel.ErrNoChannel):
		return Deny, noApprover(name, q.Decision)
	case errors.Is(err, channel.ErrTimeout):
		return Deny, toolresult.Error("toolwarden: %s was not approved: no answer within %s (asked through %s), so it was denied.", name, timeout, r.Setting.Where())
	}
	return Deny, toolresult.Error("toolwarden: %s was not approved (%v), so it was denied.", name, err)
}

// noApprover is the refusal of an ask nobody can answer.
func noApprover(name string, d *host.Decision) *mcp.CallToolResult {
	return toolresult.Error("toolwarden: this call to %s needs the user's approval, but the agent has no approver (sdk.WithApprover) and approval_channel does not use the inbox; the call was not made.\nWhy: %s", name, toolresult.Reasons(d))
}
