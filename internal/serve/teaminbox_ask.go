package serve

import (
	"context"
	"errors"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/toolresult"
)

// The asking side of the team inbox: which asks go there, and how an
// answer from it is applied.

// teamFor is the team inbox c's asks are posted to; nil without a store.
func (s *Server) teamFor(c caller) channel.TeamInbox {
	if s.opts.Store == nil {
		return nil
	}
	return teamInbox{st: s.opts.Store, principal: c.principal.Name}
}

// needsApprover reports whether d's ask must go to an approver other than
// c: the config names approvers for the tool and c is not one of them, so
// c's own answer would not count. It goes to the team inbox, where an
// approver answers, when serve has a store.
func (s *Server) needsApprover(c caller, d *host.Decision) bool {
	return s.opts.Store != nil && d.ApproverLevels() != nil &&
		!d.MayApprove(policy.Caller{Name: c.principal.Name, Groups: c.principal.Groups})
}

// askApprovers posts the ask of a caller who may not approve it to the
// team inbox only (the caller's own prompt would ask someone whose answer
// does not count), and waits for an approver's answer up to the approval
// timeout. approval_channel = "none" still denies at once; the webhook
// still hears of the ask.
func (s *Server) askApprovers(ctx context.Context, c caller, rt *route, call host.Call, d *host.Decision, q *channel.Question, r *channel.Runner) *mcp.CallToolResult {
	if r.Setting.Effective() != config.ChannelNone {
		r.Setting.Value = config.ChannelInbox
	}
	prompt := channel.Prompt{Origin: "serve", Session: call.Session, Question: q, Timeout: s.opts.ApprovalTimeout}
	ans, err := r.Ask(ctx, prompt, nil)
	var refusal *channel.RefusedError
	who := approverNames(d.ApproverLevels())
	switch {
	case err == nil:
		return s.chooseTeam(ctx, c, rt, call, d, ans)
	case errors.As(err, &refusal):
		return toolresult.Error("toolwarden denied this call to %s: %s [%s]", rt.name, channel.Refusal(refusal.Setting), channel.Code)
	case errors.Is(err, channel.ErrTimeout):
		return toolresult.Error("toolwarden: %s needs approval by %s, and none of them answered within %s, so it was denied. An approver answers in the team inbox (%s, on any replica of this gateway); call the tool again once they are there.",
			rt.name, who, s.opts.ApprovalTimeout, s.teamInboxURL())
	}
	return toolresult.Error("toolwarden: %s needs approval by %s, but the ask could not be put to them: %v; the call was not made.", rt.name, who, err)
}

// chooseTeam applies an answer from the team inbox: deny, or approve as
// the approver who answered (host.ApproveBy checks them against the rules
// in force, so an approver removed since the ask is not one), with an
// "always" covering whom they chose, and make the call.
func (s *Server) chooseTeam(ctx context.Context, c caller, rt *route, call host.Call, d *host.Decision, ans channel.Answer) *mcp.CallToolResult {
	t := ans.Team
	scope, allow := channel.ScopeOf(ans.Option)
	if !allow {
		return toolresult.Error("toolwarden: %s denied this call to %s in the team inbox. Do not retry it unless the user asks.", t.By, rt.name)
	}
	// With no approvers named only the asker answers: an answer by anyone
	// else (a store row written by hand) is not theirs to give.
	if d.ApproverLevels() == nil && t.By != c.principal.Name {
		return toolresult.Error("toolwarden: the answer to this call to %s in the team inbox was given by %q, and only %q may answer it; the call was not made.", rt.name, t.By, c.principal.Name)
	}
	var grant session.GrantScope
	if scope == host.Always {
		grant = t.Scope
	}
	by := host.Caller{Name: t.By, Groups: t.ByGroups}
	if err := s.h.ApproveBy(call.Session, d, scope, by, grant); err != nil {
		return toolresult.Error("toolwarden: the approval of this call to %s by %q in the team inbox does not hold: %v; the call was not made.", rt.name, t.By, err)
	}
	return s.forward(ctx, rt, call, d)
}

// teamInboxURL is where the team inbox page is, as clients reach this
// gateway: beside /mcp.
func (s *Server) teamInboxURL() string {
	base := strings.TrimSuffix(s.opts.ResourceURL, "/mcp")
	if base == "" {
		return TeamInboxPath
	}
	return base + TeamInboxPath
}
