package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/toolresult"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// callTool serves every tools/call (mcp-go's handler for each route): the
// same steps, refusals and audit records as toolwarden proxy, for the
// caller and session of this request.
func (s *Server) callTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	if !s.admit() {
		return toolresult.Error("toolwarden is shutting down; %s was not called.", name), nil
	}
	defer s.inflight.Done()
	c, err := s.callerOf(ctx, req.Params.Meta)
	if err != nil {
		return toolresult.Error("toolwarden: %v; %s was not called.", err, name), nil
	}
	rt := s.route(name)
	if rt == nil {
		return toolresult.Error("toolwarden: there is no tool %q (list the tools again: its server may no longer offer it).", name), nil
	}
	args := bytes.TrimSpace(req.Params.RawArguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if args[0] != '{' {
		return toolresult.Error("toolwarden: the arguments of %s must be a JSON object.", name), nil
	}
	call := host.Call{Session: c.session, Server: rt.up.Name(), Tool: rt.tool, Arguments: json.RawMessage(args), Context: s.serverContext(rt.up)}
	d := s.h.Check(ctx, call)
	s.decided(ctx, &d)
	res := s.decide(ctx, c, rt, call, &d, &req)
	if res.IsError {
		tracedFrom(ctx).fail(errorType(&d))
	}
	return res, nil
}

// errorType classes a refused or failed call for its span.
func errorType(d *host.Decision) string {
	if d.Decision == policy.Deny {
		return "denied"
	}
	return "tool_error"
}

// decide is the rest of a call once the policy decided.
func (s *Server) decide(ctx context.Context, c caller, rt *route, call host.Call, d *host.Decision, req *mcp.CallToolRequest) *mcp.CallToolResult {
	// Any answer on the call must be to a question we asked: a client can
	// attach inputResponses to a first call it was never asked about.
	if req.Params.RequestState != "" || len(req.Params.InputResponses) > 0 {
		return s.resume(ctx, rt, call, d, req)
	}
	switch d.Decision {
	case policy.Deny:
		return toolresult.Denied(rt.name, d)
	case policy.Ask:
		return s.ask(ctx, c, rt, call, d)
	}
	return s.forward(ctx, rt, call, d)
}

// ask puts the decision's question to the human: as an input request
// (multi round-trip) to a 2026-07-28 client, whose retry carries the
// answer and the sealed state; as elicitation/create on the call's own
// stream to a 2025-era client; as a tool error that says how to approve
// to a client that can do neither.
func (s *Server) ask(ctx context.Context, c caller, rt *route, call host.Call, d *host.Decision) *mcp.CallToolResult {
	q := channel.NewQuestion(rt.name, d, call.Arguments, s.h.CanRememberAlways())
	pinned, seen := s.h.Session(call.Session).Pinned(call.Server, rt.tool.Name)
	q.Drifted = seen && pinned != rt.tool.HashHex
	// approval_channel: anything but plain elicitation goes through the
	// channel runner, except a 2026-07-28 client's input request (its
	// answer comes on a retry the runner cannot wait for), of which the
	// runner only tells the webhook.
	chans := s.channels(c, d)
	if s.needsApprover(c, d) {
		return s.askApprovers(ctx, c, rt, call, d, &q, chans) // teaminbox_ask.go
	}
	elicits := canElicit(ctx, c) && chans.Setting.Effective().Elicits()
	if chans.Uses() && !(c.modern && elicits) {
		return s.askChannels(ctx, c, rt, call, d, &q, chans, elicits)
	}
	if !elicits {
		if s.startedElsewhere(ctx, c) {
			return s.askedElsewhere(rt, call, d) // replicas.go
		}
		return s.needsApproval(rt, call, d)
	}
	if c.modern {
		state, err := s.signer.Mint(channel.BindingFor(call, d))
		if err != nil {
			channel.LogStoreCause(s.log, err, "session", call.Session, "server", call.Server, "tool", call.Tool.Name)
			return toolresult.Error("toolwarden: cannot ask for approval: %v", err)
		}
		chans.Tell(channel.Prompt{Origin: "serve", Session: call.Session, Question: &q}, channel.Elicitation)
		return server.NewInputRequestBuilder(state).Elicit(channel.ElicitationID, q.Params()).ToolResult()
	}
	ectx, cancel := context.WithTimeout(ctx, s.opts.ApprovalTimeout)
	defer cancel()
	res, err := s.mcp.RequestElicitation(ectx, elicitationRequest(q.ParamsFor(server.RequestProtocolVersion(ctx))))
	if err != nil {
		if ectx.Err() != nil && ctx.Err() == nil {
			return toolresult.Error("toolwarden: %s was not approved: no answer within %s, so it was denied.", rt.name, s.opts.ApprovalTimeout)
		}
		return toolresult.Error("toolwarden: %s needs approval, but asking the client failed: %v", rt.name, err)
	}
	return s.answer(ctx, rt, call, d, &q, res, false)
}

// channels is the runner for an ask of c about d under the config
// deciding now (approval_channel, most specific first, and [webhook]).
// With a store, its inbox is the team inbox.
func (s *Server) channels(c caller, d *host.Decision) *channel.Runner {
	cfg := s.h.Config()
	return &channel.Runner{
		Setting: cfg.ApprovalChannel(d.Server, d.App),
		Webhook: cfg.Webhook,
		Log:     s.log,
		Record:  func(a audit.Ask) { s.h.Audit(c.session, a) },
		Team:    s.teamFor(c),
	}
}

// askChannels puts the question to every configured channel (the
// client's elicitation when it can, the inbox, the webhook) and applies
// the first answer.
func (s *Server) askChannels(ctx context.Context, c caller, rt *route, call host.Call, d *host.Decision, q *channel.Question, r *channel.Runner, elicits bool) *mcp.CallToolResult {
	var el channel.Elicit
	if elicits && !c.modern {
		el = func(ectx context.Context) (string, error) {
			res, err := s.mcp.RequestElicitation(ectx, elicitationRequest(q.ParamsFor(server.RequestProtocolVersion(ctx))))
			if err != nil {
				return "", err
			}
			if toolresult.Ended(res) {
				return "", &channel.EndedError{Outcome: endedOutcome(res.Action)}
			}
			return q.Elicited(res)
		}
	}
	prompt := channel.Prompt{Origin: "serve", Session: call.Session, Question: q, Timeout: s.opts.ApprovalTimeout}
	ans, err := r.Ask(ctx, prompt, el)
	var refusal *channel.RefusedError
	switch {
	case err == nil:
		if ans.Ended != "" {
			action := mcp.ElicitationResponseActionCancel
			if ans.Ended == channel.Declined {
				action = mcp.ElicitationResponseActionDecline
			}
			return toolresult.Unanswered(rt.name, d, action, toolresult.AlwaysFor(s.h, call.Session), false)
		}
		if ans.Team != nil {
			return s.chooseTeam(ctx, c, rt, call, d, ans)
		}
		return s.choose(ctx, rt, call, d, ans.Option)
	case errors.As(err, &refusal):
		return toolresult.Error("toolwarden denied this call to %s: %s [%s]", rt.name, channel.Refusal(refusal.Setting), channel.Code)
	case errors.Is(err, channel.ErrNoChannel):
		// No channel asks anyone, but the ask is still an ask: the
		// webhook hears of it.
		prompt.Timeout = 0
		r.Tell(prompt)
		return s.needsApproval(rt, call, d)
	case errors.Is(err, channel.ErrTimeout):
		return toolresult.Error("toolwarden: %s was not approved: no answer within %s (asked through %s), so it was denied.", rt.name, s.opts.ApprovalTimeout, r.Setting.Where())
	}
	return toolresult.Error("toolwarden: %s needs approval, but asking failed: %v; the call was not made.", rt.name, err)
}

// canElicit reports whether the client can show a form prompt: declared on
// the request by 2026-07-28 clients, at initialize by earlier ones.
func canElicit(ctx context.Context, c caller) bool {
	if c.modern {
		info := server.RequestProtocolInfoFromContext(ctx)
		return info != nil && info.ClientCapabilities != nil && formMode(info.ClientCapabilities.Elicitation)
	}
	if sc, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return formMode(sc.GetClientCapabilities().Elicitation)
	}
	return false
}

// formMode reports whether an elicitation capability covers form mode: an
// empty capability means form (2025-06-18); one that lists only url does not.
func formMode(c *mcp.ElicitationCapability) bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

// resume handles a retry that carries an answer. The state must be one
// this process minted for this principal's conversation, this definition
// and these arguments, unused and unexpired; anything else is refused and
// the call is not made.
func (s *Server) resume(ctx context.Context, rt *route, call host.Call, d *host.Decision, req *mcp.CallToolRequest) *mcp.CallToolResult {
	if req.Params.RequestState == "" {
		return refused(rt, channel.ErrForged)
	}
	if err := s.signer.Redeem(req.Params.RequestState, channel.BindingFor(call, d)); err != nil {
		channel.LogStoreCause(s.log, err, "session", call.Session, "server", call.Server, "tool", call.Tool.Name)
		return refused(rt, err)
	}
	res := server.ElicitationResponse(req.Params.InputResponses, channel.ElicitationID)
	if res == nil {
		return refused(rt, errors.New("the retry carries no answer to the approval question"))
	}
	switch d.Decision {
	case policy.Deny:
		return toolresult.Denied(rt.name, d)
	case policy.Allow:
		// Allowed meanwhile (approved for the session on a parallel call).
		return s.forward(ctx, rt, call, d)
	}
	q := channel.NewQuestion(rt.name, d, call.Arguments, s.h.CanRememberAlways())
	return s.answer(ctx, rt, call, d, &q, res, true)
}

// answer applies the human's answer: deny, or approve with its scope and
// make the call.
func (s *Server) answer(ctx context.Context, rt *route, call host.Call, d *host.Decision, q *channel.Question, res *mcp.ElicitationResult, retried bool) *mcp.CallToolResult {
	choice, err := q.Elicited(res)
	if err != nil {
		if retried {
			return refused(rt, err)
		}
		// An elicitation client sent no requestState: say what it can do.
		return toolresult.Error("toolwarden refused the answer to the approval prompt for %s, and did not make the call: %v. Call the tool again to be asked again.", rt.name, err)
	}
	if toolresult.Ended(res) {
		s.h.Audit(call.Session, audit.Ask{Server: d.Server, Tool: d.Tool, App: d.App, Channel: channel.Elicitation, Outcome: endedOutcome(res.Action)})
		return toolresult.Unanswered(rt.name, d, res.Action, toolresult.AlwaysFor(s.h, call.Session), false)
	}
	s.h.Audit(call.Session, audit.Ask{Server: d.Server, Tool: d.Tool, App: d.App, Channel: channel.Elicitation, Outcome: "answered", Option: choice})
	return s.choose(ctx, rt, call, d, choice)
}

// choose applies the option the human chose, from whichever channel: deny,
// or approve with its scope and make the call.
func (s *Server) choose(ctx context.Context, rt *route, call host.Call, d *host.Decision, choice string) *mcp.CallToolResult {
	scope, allow := channel.ScopeOf(choice)
	if !allow {
		return toolresult.Error("toolwarden: the user denied this call to %s. Do not retry it unless the user asks.", rt.name)
	}
	if err := s.h.Approve(call.Session, d, scope); err != nil {
		return toolresult.Error("toolwarden: could not record the approval of %s: %v", rt.name, err)
	}
	return s.forward(ctx, rt, call, d)
}

// endedOutcome is the audit outcome of a prompt the client ended.
func endedOutcome(action mcp.ElicitationResponseAction) string {
	if action == mcp.ElicitationResponseActionDecline {
		return channel.Declined
	}
	return channel.Cancelled
}

// forward makes the call upstream (once more after a transport failure if
// the tool is trustworthily idempotent), runs Observe, and returns the
// upstream's result.
func (s *Server) forward(ctx context.Context, rt *route, call host.Call, d *host.Decision) *mcp.CallToolResult {
	uctx, span := s.upstreamSpan(ctx, rt)
	raw, err := rt.up.Call(uctx, rt.tool.Name, call.Arguments)
	if err != nil && upstream.IsTransport(err) && d.Hints[hints.Idempotent] == hints.True {
		s.log.Info("retrying idempotent call after transport failure", "server", rt.up.Name(), "tool", rt.tool.Name, "err", err)
		raw, err = rt.up.Call(uctx, rt.tool.Name, call.Arguments)
	}
	span.End(upstreamErrorType(err))
	if err == nil && len(raw) > s.opts.MaxResultBytes {
		err = &upstream.TooLargeError{Size: len(raw), Limit: s.opts.MaxResultBytes}
	}
	res, err := s.result(rt, raw, err)
	switch {
	case !s.h.ObservesCall(d):
	case err != nil:
		s.h.Observe(ctx, call, d, host.Result{Text: toolresult.Text(res), IsError: true})
	default:
		// Beside the answer: the session's next call waits for it.
		s.h.ObserveAfter(ctx, call, d, host.Result{Text: toolresult.Text(res), IsError: res.IsError})
	}
	return res
}

// result is the client's answer for the upstream's raw result: the result
// itself, or a tool error that says what went wrong. An upstream cannot
// make the gateway ask its client anything: a result asking for input is
// passed on as a plain result.
func (s *Server) result(rt *route, raw json.RawMessage, err error) (*mcp.CallToolResult, error) {
	if err != nil {
		return upstreamError(rt, err), err
	}
	var res mcp.CallToolResult
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &res) != nil {
		err := fmt.Errorf("%s returned a malformed result for %s", rt.up.Name(), rt.name)
		return toolresult.Error("toolwarden: %v.", err), err
	}
	res.ResultType = ""
	res.MultiRoundTripResult = mcp.MultiRoundTripResult{}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	return &res, nil
}

// upstreamErrorType classes an upstream call's failure for its span.
func upstreamErrorType(err error) string {
	var rpc *upstream.RPCError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &rpc):
		return strconv.Itoa(rpc.Code)
	case errors.Is(err, upstream.ErrTimeout):
		return "timeout"
	case upstream.IsTransport(err):
		return "transport"
	}
	return "unavailable"
}

func refused(rt *route, err error) *mcp.CallToolResult {
	return toolresult.Error("toolwarden refused the approval sent with this call to %s, and did not make the call: %v. Call the tool again without inputResponses or requestState to be asked.", rt.name, err)
}

// needsApproval explains an ask to a client that cannot show prompts.
func (s *Server) needsApproval(rt *route, call host.Call, d *host.Decision) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "toolwarden: this call to %s needs the user's approval, but this MCP client cannot show approval prompts (it did not declare the elicitation capability). The call was not made.\n", rt.name)
	toolresult.HowToAllow(&b, d, toolresult.AlwaysFor(s.h, call.Session), "use an MCP client that supports elicitation", false)
	return mcp.NewToolResultError(b.String())
}

// upstreamError turns a failed upstream call into a tool error.
func upstreamError(rt *route, err error) *mcp.CallToolResult {
	return toolresult.UpstreamFailed(rt.name, rt.up, err, "[serve] max_result_kib")
}

// serverContext is what calls to u are resolved against (its working
// directory, home, command-line directories), for path rules.
func (s *Server) serverContext(u *upstream.Client) *policy.ServerContext {
	if x, ok := s.contexts.Load(u.Name()); ok {
		return x.(*policy.ServerContext)
	}
	wd, _ := os.Getwd()
	x, _ := s.contexts.LoadOrStore(u.Name(), u.Spec().ServerContext(wd))
	return x.(*policy.ServerContext)
}
