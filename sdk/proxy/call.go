package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/host/hints"
	"github.com/toolwarden/toolwarden/host/policy"
	"github.com/toolwarden/toolwarden/sdk/approval"
	"github.com/toolwarden/toolwarden/sdk/upstream"
)

// callRequest is a tools/call as the proxy reads it off the wire: one
// decode of the message, arguments kept raw (they are forwarded and hashed
// as sent, never re-encoded).
type callRequest struct {
	ID        json.RawMessage
	Name      string
	Arguments json.RawMessage
	// RequestState and InputResponses are a multi round-trip answer.
	RequestState   string
	InputResponses json.RawMessage
	// Modern is set for a 2026-07-28 request; Elicit then says whether it
	// declared the elicitation capability.
	Modern bool
	Elicit bool
}

type wireCall struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params *struct {
		Name           string          `json:"name"`
		Arguments      json.RawMessage `json:"arguments"`
		RequestState   string          `json:"requestState"`
		InputResponses json.RawMessage `json:"inputResponses"`
		Meta           struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
			Capabilities    *struct {
				Elicitation json.RawMessage `json:"elicitation"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

// parseCall reads a tools/call request. ok is false for anything else, or
// for a malformed one, which is then left to mcp-go to answer.
func parseCall(line []byte) (*callRequest, bool) {
	var w wireCall
	if json.Unmarshal(line, &w) != nil || w.Method != string(mcp.MethodToolsCall) || len(w.ID) == 0 || string(w.ID) == "null" || w.Params == nil || w.Params.Name == "" {
		return nil, false
	}
	pm := w.Params
	r := &callRequest{ID: w.ID, Name: pm.Name, Arguments: pm.Arguments, RequestState: pm.RequestState, InputResponses: pm.InputResponses}
	if mcp.IsModernProtocol(pm.Meta.ProtocolVersion) {
		r.Modern = true
		if c := pm.Meta.Capabilities; c != nil && len(c.Elicitation) > 0 && string(c.Elicitation) != "null" {
			var ec mcp.ElicitationCapability
			r.Elicit = json.Unmarshal(c.Elicitation, &ec) == nil && formMode(&ec)
		}
	}
	if string(r.InputResponses) == "null" {
		r.InputResponses = nil
	}
	return r, true
}

// outcome is a call's result: the upstream's, as it wrote it, or one the
// proxy made (an error, a question).
type outcome struct {
	raw json.RawMessage
	res *mcp.CallToolResult
}

func made(r *mcp.CallToolResult) outcome { return outcome{res: r} }

// serve runs one call and writes its response.
func (p *Proxy) serve(ctx context.Context, req *callRequest) {
	out := p.run(ctx, req)
	p.respond(req, out)
}

// respond writes the JSON-RPC response for a call. A 2026-07-28 client gets
// the resultType that revision requires.
func (p *Proxy) respond(req *callRequest, out outcome) {
	body := out.raw
	if out.res != nil {
		if req.Modern && out.res.ResultType == "" {
			out.res.ResultType = mcp.ResultTypeComplete
		}
		b, err := json.Marshal(out.res)
		if err != nil {
			b, _ = json.Marshal(mcp.NewToolResultError("toolwarden: cannot encode the result: " + err.Error()))
		}
		body = b
	} else if req.Modern {
		body = withResultType(body)
	}
	line := make([]byte, 0, len(body)+len(req.ID)+40)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, req.ID...)
	line = append(line, `,"result":`...)
	line = appendOneLine(line, body)
	line = append(line, "}\n"...)
	_, _ = p.out.Write(line)
}

// withResultType adds "resultType":"complete" to a raw result that has none.
func withResultType(raw json.RawMessage) json.RawMessage {
	var probe struct {
		ResultType *string `json:"resultType"`
	}
	t := bytes.TrimSpace(raw)
	if len(t) < 2 || t[0] != '{' || json.Unmarshal(t, &probe) != nil || probe.ResultType != nil {
		return raw
	}
	inner := bytes.TrimSpace(t[1:])
	out := append([]byte(`{"resultType":"complete"`), ',')
	if len(inner) > 0 && inner[0] == '}' {
		out = out[:len(out)-1]
	}
	return append(out, inner...)
}

// callTool is what mcp-go holds as every tool's handler. Calls normally
// never reach it (intake serves them); it is here so that a call mcp-go
// does see is decided the same way.
func (p *Proxy) callTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	cr := &callRequest{Name: req.Params.Name, Arguments: req.Params.RawArguments, RequestState: req.Params.RequestState}
	if len(req.Params.InputResponses) > 0 {
		cr.InputResponses, _ = json.Marshal(req.Params.InputResponses)
	}
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		cr.Modern = true
		cr.Elicit = info.ClientCapabilities != nil && formMode(info.ClientCapabilities.Elicitation)
	}
	out := p.run(ctx, cr)
	if out.res != nil {
		return out.res, nil
	}
	return mcp.ParseCallToolResult(&out.raw)
}

// run decides a call, maybe asks, then forwards and observes.
func (p *Proxy) run(ctx context.Context, req *callRequest) outcome {
	name := req.Name
	rt := p.route(name)
	if rt == nil {
		return made(toolError("toolwarden: there is no tool %q (list the tools again: its server may no longer offer it).", name))
	}
	args := bytes.TrimSpace(req.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if len(args) > p.opts.maxArgs {
		return made(toolError("toolwarden: the arguments are %d bytes; the limit is %d bytes (toolwarden --max-arg-bytes). The call was not made.", len(args), p.opts.maxArgs))
	}
	if args[0] != '{' {
		return made(toolError("toolwarden: the arguments of %s must be a JSON object.", name))
	}
	call := host.Call{Session: p.session, Server: rt.up.Name(), Tool: rt.tool, Arguments: json.RawMessage(args)}
	pinned, seen := p.h.Session(p.session).Pinned(call.Server, rt.tool.Name)
	d := p.h.Check(ctx, call)
	drifted := seen && pinned != rt.tool.HashHex

	// Any answer on the call must be to a question we asked: a client can
	// attach inputResponses to a first call it was never asked about.
	if req.RequestState != "" || len(req.InputResponses) > 0 {
		return p.resume(ctx, rt, call, &d, req)
	}
	switch d.Decision {
	case policy.Deny:
		return made(denied(rt, &d))
	case policy.Ask:
		return p.ask(ctx, rt, call, &d, req, drifted)
	}
	return p.forward(ctx, rt, call, &d)
}

// ask puts the decision's question to the human: through a multi
// round-trip input request for 2026-07-28 clients (the answer comes back
// on a retry, with the signed state), through elicitation/create for
// earlier clients (within the approval timeout), or, when the client cannot
// elicit, as a tool error that says how to approve.
func (p *Proxy) ask(ctx context.Context, rt *route, call host.Call, d *host.Decision, req *callRequest, drifted bool) outcome {
	q := approval.NewQuestion(rt.name, d, call.Arguments, p.h.Approvals() != nil)
	q.Drifted = drifted
	if !p.canElicit(req) {
		return made(p.needsApproval(rt, d))
	}
	if req.Modern {
		state, err := p.signer.Mint(p.binding(call, d))
		if err != nil {
			return made(toolError("toolwarden: cannot ask for approval: %v", err))
		}
		return made(server.NewInputRequestBuilder(state).Elicit(approval.ElicitationID, q.Params()).ToolResult())
	}
	p.mu.RLock()
	srv, sess := p.srv, p.sessCtx
	p.mu.RUnlock()
	ectx, cancel := context.WithTimeout(sess, p.opts.approvalTimeout)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	res, err := srv.RequestElicitation(ectx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  q.Params(),
	})
	if err != nil {
		if ectx.Err() != nil && ctx.Err() == nil {
			return made(toolError("toolwarden: %s was not approved: no answer within %s, so it was denied.", rt.name, p.opts.approvalTimeout))
		}
		return made(toolError("toolwarden: %s needs approval, but asking the client failed: %v", rt.name, err))
	}
	return p.answer(ctx, rt, call, d, &q, res)
}

// canElicit reports whether the client can show a prompt: declared on the
// request by 2026-07-28 clients, at initialize by earlier ones.
func (p *Proxy) canElicit(req *callRequest) bool {
	if req.Modern {
		return req.Elicit
	}
	p.mu.RLock()
	sess := p.sessCtx
	p.mu.RUnlock()
	if sess == nil {
		return false
	}
	if s, ok := server.ClientSessionFromContext(sess).(server.SessionWithClientInfo); ok {
		return formMode(s.GetClientCapabilities().Elicitation)
	}
	return false
}

// formMode reports whether an elicitation capability covers form mode: an
// empty capability means form (2025-06-18); one that lists only url does not.
func formMode(c *mcp.ElicitationCapability) bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

// resume handles a retry that carries an answer. The state must be one we
// minted for this session, this definition and these arguments, unused and
// unexpired; anything else is refused and the call is not made.
func (p *Proxy) resume(ctx context.Context, rt *route, call host.Call, d *host.Decision, req *callRequest) outcome {
	if req.RequestState == "" {
		return made(refused(rt, approval.ErrForged))
	}
	if err := p.signer.Redeem(req.RequestState, p.binding(call, d)); err != nil {
		return made(refused(rt, err))
	}
	var responses mcp.InputResponses
	if len(req.InputResponses) > 0 {
		if err := json.Unmarshal(req.InputResponses, &responses); err != nil {
			return made(refused(rt, fmt.Errorf("inputResponses: %v", err)))
		}
	}
	res := server.ElicitationResponse(responses, approval.ElicitationID)
	if res == nil {
		return made(refused(rt, errors.New("the retry carries no answer to the approval question")))
	}
	switch d.Decision {
	case policy.Deny:
		return made(denied(rt, d))
	case policy.Allow:
		// Allowed meanwhile (say, approved for the session on a parallel
		// call): nothing left to ask.
		return p.forward(ctx, rt, call, d)
	}
	q := approval.NewQuestion(rt.name, d, call.Arguments, p.h.Approvals() != nil)
	return p.answer(ctx, rt, call, d, &q, res)
}

// answer applies the human's answer: deny, or approve with its scope and
// make the call.
func (p *Proxy) answer(ctx context.Context, rt *route, call host.Call, d *host.Decision, q *approval.Question, res *mcp.ElicitationResult) outcome {
	choice, err := q.Answer(res)
	if err != nil {
		return made(refused(rt, err))
	}
	var scope host.Scope
	switch choice {
	case policy.OptionDeny:
		return made(toolError("toolwarden: the user denied this call to %s. Do not retry it unless the user asks.", rt.name))
	case policy.OptionAllowSession:
		scope = host.ForSession
	case policy.OptionAlways:
		scope = host.Always
	default:
		scope = host.Once
	}
	if err := p.h.Approve(p.session, d, scope); err != nil {
		return made(toolError("toolwarden: could not record the approval of %s: %v", rt.name, err))
	}
	return p.forward(ctx, rt, call, d)
}

func (p *Proxy) binding(call host.Call, d *host.Decision) approval.Binding {
	return approval.Binding{
		Session:        call.Session,
		Server:         call.Server,
		Tool:           call.Tool.Name,
		DefinitionHash: d.DefinitionHash,
		Arguments:      call.Arguments,
	}
}

// forward makes the call upstream, retries it once after a transport
// failure if the tool is trustworthily idempotent, and runs Observe on
// the outcome. The upstream's result goes to the client as it wrote it.
func (p *Proxy) forward(ctx context.Context, rt *route, call host.Call, d *host.Decision) outcome {
	raw, err := rt.up.Call(ctx, rt.tool.Name, call.Arguments)
	if err != nil && upstream.IsTransport(err) && d.Hints[hints.Idempotent] == hints.True {
		p.log.Info("retrying idempotent call after transport failure", "server", rt.up.Name(), "tool", rt.tool.Name, "err", err)
		raw, err = rt.up.Call(ctx, rt.tool.Name, call.Arguments)
	}
	if err != nil {
		res := upstreamError(rt, err)
		p.h.Observe(ctx, call, d, host.Result{Text: resultText(res), IsError: true})
		return made(res)
	}
	text, isErr, ok := summarize(raw)
	if !ok {
		res := toolError("toolwarden: %s returned a malformed result for %s.", rt.up.Name(), rt.name)
		p.h.Observe(ctx, call, d, host.Result{Text: resultText(res), IsError: true})
		return made(res)
	}
	p.h.Observe(ctx, call, d, host.Result{Text: text, IsError: isErr})
	return outcome{raw: raw}
}

// summarize reads what Observe sees of a raw result: its text content
// (else its structured content) and isError. ok is false when the result
// is not a tool result at all.
func summarize(raw json.RawMessage) (text string, isError, ok bool) {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", false, false
	}
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		}
	}
	if b.Len() == 0 && len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		return string(r.StructuredContent), r.IsError, true
	}
	return b.String(), r.IsError, true
}

// resultText is the text Observe sees: the text content, else the
// structured content as JSON.
func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(mcp.TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	if b.Len() == 0 && r.StructuredContent != nil {
		if len(r.RawStructuredContent) > 0 {
			return string(r.RawStructuredContent)
		}
		if j, err := json.Marshal(r.StructuredContent); err == nil {
			return string(j)
		}
	}
	return b.String()
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	return mcp.NewToolResultError(fmt.Sprintf(format, args...))
}

func reasonText(d *host.Decision) string {
	msgs := make([]string, 0, len(d.Reasons))
	for _, r := range d.Reasons {
		if r.Code != "" {
			msgs = append(msgs, r.Message+" ["+r.Code+"]")
		} else {
			msgs = append(msgs, r.Message)
		}
	}
	return strings.Join(msgs, "; ")
}

func denied(rt *route, d *host.Decision) *mcp.CallToolResult {
	if d.Hidden {
		return toolError("toolwarden: MCP tool call blocked by app configuration: %s is not available (%s).", rt.name, reasonText(d))
	}
	return toolError("toolwarden denied this call to %s: %s", rt.name, reasonText(d))
}

func refused(rt *route, err error) *mcp.CallToolResult {
	return toolError("toolwarden refused the approval sent with this call to %s, and did not make the call: %v. Call the tool again without inputResponses or requestState to be asked.", rt.name, err)
}

// needsApproval explains an ask to a client that cannot show prompts.
func (p *Proxy) needsApproval(rt *route, d *host.Decision) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "toolwarden: this call to %s needs the user's approval, but this MCP client cannot show approval prompts (it did not declare the elicitation capability). The call was not made.\n", rt.name)
	fmt.Fprintf(&b, "Why: %s\n", reasonText(d))
	if hs := d.Hints.String(); hs != "" {
		fmt.Fprintf(&b, "Hints: %s\n", hs)
	}
	b.WriteString("To allow it, the user can:\n")
	fmt.Fprintf(&b, "  - set approval_mode = \"approve\" in [apps.%s.tools.%q] of the toolwarden config (or default_tools_approval_mode = \"approve\" in [apps.%s]);\n", d.App, d.Tool, d.App)
	if d.Rememberable && p.h.Approvals() != nil {
		fmt.Fprintf(&b, "  - or approve this exact definition permanently: toolwarden approvals add --approvals %q --server %s --tool %s --hash %s", p.h.Approvals().Path(), d.Server, d.Tool, d.DefinitionHash)
		if d.App != d.Server {
			fmt.Fprintf(&b, " --app %s", d.App)
		}
		if d.Connector != "" {
			fmt.Fprintf(&b, " --connector %s", d.Connector)
		}
		b.WriteString(";\n")
	}
	b.WriteString("  - or use an MCP client that supports elicitation.")
	return mcp.NewToolResultError(b.String())
}

// upstreamError turns a failed upstream call into a tool error.
func upstreamError(rt *route, err error) *mcp.CallToolResult {
	var rpc *upstream.RPCError
	var un *upstream.UnavailableError
	switch {
	case errors.As(err, &rpc):
		return toolError("%s: %s (error %d from server %s)", rt.name, rpc.Message, rpc.Code, rt.up.Name())
	case errors.Is(err, upstream.ErrTimeout):
		return toolError("toolwarden: %s did not answer within %s (tool_timeout_sec); the call was cancelled.", rt.name, rt.up.ToolTimeout())
	case errors.As(err, &un):
		return toolError("toolwarden: %v", un)
	case upstream.IsTransport(err):
		return toolError("toolwarden: the call to %s failed because server %s stopped or the connection broke (%v); it will be restarted on the next call. The call may or may not have run.", rt.name, rt.up.Name(), errors.Unwrap(err))
	}
	return toolError("toolwarden: the call to %s failed: %v", rt.name, err)
}
