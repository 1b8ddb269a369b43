package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolwarden/toolwarden/internal/audit"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/rawjson"
	"github.com/toolwarden/toolwarden/internal/toolresult"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// callRequest is a tools/call as the intake's reader read it (see
// message.call): arguments kept raw (they are forwarded and hashed as
// sent, never re-encoded).
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
	// Progress is _meta.progressToken, raw: the upstream gets it, and its
	// progress notifications for it are relayed.
	Progress json.RawMessage
}

// outcome is a call's result: the upstream's, as it wrote it, or one the
// proxy made (an error, a question).
type outcome struct {
	raw json.RawMessage
	res *mcp.CallToolResult
}

func made(r *mcp.CallToolResult) outcome { return outcome{res: r} }

// respond writes the JSON-RPC response for a call. A 2026-07-28 client gets
// the resultType that revision requires. A large result is written from
// where it lies, in pieces under the output's lock, not copied into a
// line of its own: a result is held once on its way (see docs/proxy.md).
func (p *Proxy) respond(req *callRequest, out outcome) {
	body, lead := out.raw, []byte(nil)
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
		lead, body = resultTypeLead(body)
	}
	inPlace := len(body) > maxPooledLine && !spansLines(body)
	if lead != nil && !inPlace {
		// One piece, so that appendOneLine compacts the whole object.
		body, lead = append(lead, body...), nil
	}
	bp := linePool.Get().(*[]byte)
	line := append((*bp)[:0], `{"jsonrpc":"2.0","id":`...)
	line = append(line, req.ID...)
	line = append(line, `,"result":`...)
	if inPlace {
		line = append(line, lead...)
		p.out.writeLine(line, body, []byte("}\n"))
	} else {
		line = appendOneLine(line, body)
		line = append(line, "}\n"...)
		_, _ = p.out.Write(line) // which keeps nothing of line
	}
	if cap(line) <= maxPooledLine {
		*bp = line
		linePool.Put(bp)
	}
}

// relayProgress writes an upstream's notifications/progress for a call in
// flight to the client, as the upstream wrote it: the token in it is the
// client's own, passed on unchanged (see upstream.Client.OnProgress, which
// drops progress for any other token).
func (p *Proxy) relayProgress(line []byte) {
	out := make([]byte, 0, len(line)+1)
	_, _ = p.out.Write(append(append(out, line...), '\n'))
}

// linePool holds buffers for response lines.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledLine = 64 << 10

// withResultType adds "resultType":"complete" to a raw result that has none.
func withResultType(raw json.RawMessage) json.RawMessage {
	lead, rest := resultTypeLead(raw)
	if lead == nil {
		return raw
	}
	return append(lead, rest...)
}

// resultTypeLead splits what withResultType makes into what goes before the
// raw result's members and those members (a view of raw), so a large
// result need not be copied: lead is nil when raw is kept as it is.
func resultTypeLead(raw json.RawMessage) (lead, rest []byte) {
	t := bytes.TrimSpace(raw)
	if len(t) < 2 || t[0] != '{' || hasMember(t, "resultType") {
		return nil, raw
	}
	inner := bytes.TrimSpace(t[1:])
	lead = append([]byte(`{"resultType":"complete"`), ',')
	if len(inner) > 0 && inner[0] == '}' {
		lead = lead[:len(lead)-1]
	}
	return lead, inner
}

// callTool is what mcp-go holds as every tool's handler, which it needs
// to list the tool. It never runs: the intake serves every tools/call
// request, and mcp-go is handed none (see intake.take).
func (p *Proxy) callTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return toolError("toolwarden: internal error: a tool call reached mcp-go, which decides nothing; the call was not made."), nil
}

// step is what deciding a call leaves to do.
type step uint8

const (
	stepDone    step = iota // the outcome is the answer
	stepForward             // allowed: make the call
	stepAsk                 // ask the human first
	stepResume              // the call carries an answer to a question we asked
)

// decided is a call after the decision.
type decided struct {
	rt      *route
	call    host.Call
	d       host.Decision
	drifted bool
}

// decide is the part of a call that never waits: the route, the argument
// checks and the policy decision, which it records in dc.
func (p *Proxy) decide(ctx context.Context, req *callRequest, dc *decided) (step, outcome) {
	name := req.Name
	rt := p.route(name)
	if rt == nil {
		if out, ok := p.unstarted(name); ok {
			return stepDone, out
		}
		return stepDone, made(toolError("toolwarden: there is no tool %q (list the tools again: its server may no longer offer it).", name))
	}
	args := bytes.TrimSpace(req.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if len(args) > p.opts.maxArgs {
		return stepDone, made(toolError("toolwarden: the arguments are %d bytes; the limit is %d bytes (toolwarden --max-arg-bytes). The call was not made.", len(args), p.opts.maxArgs))
	}
	if args[0] != '{' {
		return stepDone, made(toolError("toolwarden: the arguments of %s must be a JSON object.", name))
	}
	dc.rt = rt
	dc.call = host.Call{Session: p.session, Server: rt.up.Name(), Tool: rt.tool, Arguments: json.RawMessage(args), Context: p.serverContext(rt.up)}
	dc.d = p.h.Check(ctx, dc.call)

	// Any answer on the call must be to a question we asked: a client can
	// attach inputResponses to a first call it was never asked about.
	if req.RequestState != "" || len(req.InputResponses) > 0 {
		return stepResume, outcome{}
	}
	switch dc.d.Decision {
	case policy.Deny:
		return stepDone, made(denied(rt, &dc.d))
	case policy.Ask:
		// Check pins a tool's first definition and never moves a pin
		// (only an approval does), so the pin it left says whether this
		// definition drifted from the one the session saw first.
		pinned, seen := p.h.Session(p.session).Pinned(dc.call.Server, rt.tool.Name)
		dc.drifted = seen && pinned != rt.tool.HashHex
		return stepAsk, outcome{}
	}
	return stepForward, outcome{}
}

// proceed is the part of a decided call that may wait: for the human, for
// the upstream.
func (p *Proxy) proceed(ctx context.Context, req *callRequest, dc *decided, next step) outcome {
	switch next {
	case stepResume:
		return p.resume(ctx, dc.rt, dc.call, &dc.d, req)
	case stepAsk:
		return p.ask(ctx, dc.rt, dc.call, &dc.d, req, dc.drifted)
	}
	return p.forward(ctx, dc.rt, dc.call, &dc.d)
}

// ask puts the decision's question to the human: through a multi
// round-trip input request for 2026-07-28 clients (the answer comes back
// on a retry, with the signed state), through elicitation/create for
// earlier clients (within the approval timeout), or, when the client cannot
// elicit, as a tool error that says how to approve.
func (p *Proxy) ask(ctx context.Context, rt *route, call host.Call, d *host.Decision, req *callRequest, drifted bool) outcome {
	q := channel.NewQuestion(rt.name, d, call.Arguments, p.h.CanRememberAlways())
	q.Drifted = drifted
	// approval_channel (channels.go): anything but plain elicitation goes
	// through the channel runner; plain elicitation is asked below, and so
	// is a 2026-07-28 client's input request (its answer comes on a retry
	// the runner cannot wait for), of which the runner only tells the
	// webhook.
	chans := p.channels(d)
	canElicit := p.canElicit(req) && chans.Setting.Effective().Elicits()
	if chans.Uses() && !(req.Modern && canElicit) {
		return p.askChannels(ctx, rt, call, d, req, &q, chans, canElicit)
	}
	if !canElicit {
		return made(p.needsApproval(rt, d))
	}
	if req.Modern {
		state, err := p.signer.Mint(channel.BindingFor(call, d))
		if err != nil {
			return made(toolError("toolwarden: cannot ask for approval: %v", err))
		}
		p.tellInputRequest(chans, &q)
		return made(server.NewInputRequestBuilder(state).Elicit(channel.ElicitationID, q.Params()).ToolResult())
	}
	p.mu.RLock()
	srv, sess := p.srv, p.sessCtx
	p.mu.RUnlock()
	ectx, cancel := context.WithTimeout(sess, p.opts.approvalTimeout)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	stop := p.keepAlive(req, rt.name)
	res, err := srv.RequestElicitation(ectx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  q.ParamsFor(p.down.version),
	})
	stop()
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
		return made(refused(rt, channel.ErrForged))
	}
	if err := p.signer.Redeem(req.RequestState, channel.BindingFor(call, d)); err != nil {
		channel.LogStoreCause(p.log, err, "session", call.Session, "server", call.Server, "tool", call.Tool.Name)
		return made(refused(rt, err))
	}
	var responses mcp.InputResponses
	if len(req.InputResponses) > 0 {
		if err := json.Unmarshal(req.InputResponses, &responses); err != nil {
			return made(refused(rt, fmt.Errorf("inputResponses: %v", err)))
		}
	}
	res := server.ElicitationResponse(responses, channel.ElicitationID)
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
	q := channel.NewQuestion(rt.name, d, call.Arguments, p.h.CanRememberAlways())
	return p.answer(ctx, rt, call, d, &q, res)
}

// answer applies the human's answer: deny, or approve with its scope and
// make the call.
func (p *Proxy) answer(ctx context.Context, rt *route, call host.Call, d *host.Decision, q *channel.Question, res *mcp.ElicitationResult) outcome {
	choice, err := q.Elicited(res)
	if err != nil {
		return made(refused(rt, err))
	}
	if toolresult.Ended(res) {
		// No option was chosen: the audit says what the client did.
		p.h.Audit(p.session, audit.Ask{Server: d.Server, Tool: d.Tool, App: d.App, Channel: channel.Elicitation, Outcome: endedOutcome(res.Action)})
		return made(p.unanswered(rt, d, res.Action))
	}
	p.h.Audit(p.session, audit.Ask{Server: d.Server, Tool: d.Tool, App: d.App, Channel: channel.Elicitation, Outcome: "answered", Option: choice})
	return p.choose(ctx, rt, call, d, choice)
}

// choose applies the option the human chose, from whichever channel: deny,
// or approve with its scope and make the call.
func (p *Proxy) choose(ctx context.Context, rt *route, call host.Call, d *host.Decision, choice string) outcome {
	scope, allow := channel.ScopeOf(choice)
	if !allow {
		return made(toolError("toolwarden: the user denied this call to %s. Do not retry it unless the user asks.", rt.name))
	}
	if err := p.h.Approve(p.session, d, scope); err != nil {
		return made(toolError("toolwarden: could not record the approval of %s: %v", rt.name, err))
	}
	return p.forward(ctx, rt, call, d)
}

// forward makes the call upstream, retries it once after a transport
// failure if the tool is trustworthily idempotent, and runs Observe on
// the outcome. The upstream's result goes to the client as it wrote it.
// (Calls allowed outright take the same steps without waiting: see
// Proxy.forwardAsync.)
func (p *Proxy) forward(ctx context.Context, rt *route, call host.Call, d *host.Decision) outcome {
	raw, err := rt.up.Call(ctx, rt.tool.Name, call.Arguments)
	if err != nil && retriable(err, d) {
		p.log.Info("retrying idempotent call after transport failure", "server", rt.up.Name(), "tool", rt.tool.Name, "err", err)
		raw, err = rt.up.Call(ctx, rt.tool.Name, call.Arguments)
	}
	return p.settle(ctx, rt, call, d, raw, err)
}

// retriable: a call that failed on the transport may be made again only
// if the tool is, trustworthily, idempotent.
func retriable(err error, d *host.Decision) bool {
	return upstream.IsTransport(err) && d.Hints[hints.Idempotent] == hints.True
}

// settle turns the upstream's answer into the call's outcome and runs
// Observe on it, before the client can act on the result (so labels an
// observer adds apply to the client's next call: a successful result is
// observed beside the answer, and the host holds the session's next call
// until that is done). When Observe would do nothing
// for this call (no observer plugin matches it, no audit log), neither it
// runs nor is the result's text read: the result is only checked to be a
// tool result.
func (p *Proxy) settle(ctx context.Context, rt *route, call host.Call, d *host.Decision, raw json.RawMessage, err error) outcome {
	observes := p.h.ObservesCall(d)
	if err != nil {
		res := upstreamError(rt, err)
		if observes {
			p.h.Observe(ctx, call, d, host.Result{Text: toolresult.Text(res), IsError: true})
		}
		return made(res)
	}
	text, isErr, ok := summarize(raw, observes)
	if !ok {
		res := toolError("toolwarden: %s returned a malformed result for %s.", rt.up.Name(), rt.name)
		if observes {
			p.h.Observe(ctx, call, d, host.Result{Text: toolresult.Text(res), IsError: true})
		}
		return made(res)
	}
	if observes {
		// Beside the answer: the session's next call waits for it.
		p.h.ObserveAfter(ctx, call, d, host.Result{Text: text, IsError: isErr})
	}
	return outcome{raw: raw}
}

// summarize reads what Observe sees of a raw result (valid JSON): its
// text content (else its structured content), only when withText, and
// isError. ok is false when the result is not a tool result at all: when
// encoding/json could not decode it into
//
//	struct {
//		Content []struct {
//			Type string `json:"type"`
//			Text string `json:"text"`
//		} `json:"content"`
//		StructuredContent json.RawMessage `json:"structuredContent"`
//		IsError           bool            `json:"isError"`
//	}
//
// which it reads the same way, except that keys match exactly, as the
// client reading the result matches them (see message.go), and without
// decoding anything it does not need.
func summarize(raw json.RawMessage, withText bool) (text string, isError, ok bool) {
	switch rawjson.Kind(raw) {
	case 'n':
		return "", false, true
	case '{':
	default:
		return "", false, false
	}
	content, structured, isError, ok := resultMembers(raw)
	if !ok {
		return "", false, false
	}
	if !withText {
		return "", isError, true
	}
	text = contentText(content)
	if text == "" && len(structured) > 0 && string(structured) != "null" {
		return string(structured[:min(len(structured), maxObservedText)]), isError, true
	}
	return text, isError, true
}

// resultMembers reads the members summarize needs of a raw result object;
// ok is false when one has a type the result struct cannot take.
func resultMembers(raw json.RawMessage) (content, structured []byte, isError, ok bool) {
	ok = true
	rawjson.Members(raw, func(k, v []byte) bool {
		switch {
		case rawjson.KeyIs(k, "content"):
			switch rawjson.Kind(v) {
			case 'n':
				content = nil
			case '[':
				content = v
				ok = ok && contentShape(v)
			default:
				ok = false
			}
		case rawjson.KeyIs(k, "structuredContent"):
			structured = v
		case rawjson.KeyIs(k, "isError"):
			b, isBool := rawjson.Bool(v)
			if !isBool {
				ok = false
			} else if rawjson.Kind(v) != 'n' {
				isError = b
			}
		}
		return true
	})
	return content, structured, isError, ok
}

// contentText joins the text of a content array's text items, at most
// maxObservedText bytes of it.
func contentText(content []byte) string {
	var b strings.Builder
	rawjson.Elements(content, func(el []byte) bool {
		if b.Len() >= maxObservedText {
			return false
		}
		if rawjson.Kind(el) != '{' {
			return true
		}
		var typ, txt string
		rawjson.Members(el, func(k, v []byte) bool {
			switch {
			case rawjson.KeyIs(k, "type"):
				if rawjson.Kind(v) == '"' {
					typ, _ = rawjson.String(v)
				}
			case rawjson.KeyIs(k, "text"):
				if rawjson.Kind(v) == '"' {
					txt = stringPrefix(v, maxObservedText-b.Len())
				}
			}
			return true
		})
		if typ == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(txt)
		}
		return true
	})
	return b.String()
}

// maxObservedText is how much of a result's text summarize reads for
// Observe: more than any observer is given (result_limit_kb is at most
// 960 KiB, the host's default cut 4 KiB), and small beside a large result,
// which would otherwise be held a second time, decoded, for Observe.
const maxObservedText = 1 << 20

// stringPrefix decodes at most the first n bytes of the raw JSON string
// raw (valid, with its quotes): a large string is cut before it is
// decoded, where no escape is split.
func stringPrefix(raw []byte, n int) string {
	if n <= 0 {
		return ""
	}
	if len(raw) <= n+2 {
		s, _ := rawjson.String(raw)
		return s
	}
	// Each decoded byte takes at least one raw byte, so a cut after n
	// decoded bytes lies within raw; walk escapes whole to find it.
	i, decoded := 1, 0
	for i < len(raw)-1 && decoded < n {
		if raw[i] == '\\' {
			if raw[i+1] == 'u' {
				i += 6
			} else {
				i += 2
			}
		} else {
			i++
		}
		decoded++
	}
	cut := make([]byte, 0, i+1)
	cut = append(append(cut, raw[:i]...), '"')
	s, _ := rawjson.String(cut)
	return s[:min(len(s), n)]
}

// contentShape reports whether a content array decodes into the struct
// summarize describes: each element an object (or null) whose type and
// text are strings (or null).
func contentShape(arr []byte) bool {
	ok := true
	rawjson.Elements(arr, func(el []byte) bool {
		switch rawjson.Kind(el) {
		case 'n':
			return true
		case '{':
		default:
			ok = false
			return false
		}
		rawjson.Members(el, func(k, v []byte) bool {
			if rawjson.KeyIs(k, "type") || rawjson.KeyIs(k, "text") {
				if kd := rawjson.Kind(v); kd != '"' && kd != 'n' {
					ok = false
					return false
				}
			}
			return true
		})
		return ok
	})
	return ok
}

// toolError is toolresult.Error under the name the proxy's files use.
func toolError(format string, args ...any) *mcp.CallToolResult {
	return toolresult.Error(format, args...)
}

// denied is toolresult.Denied for the tool as the client knows it.
func denied(rt *route, d *host.Decision) *mcp.CallToolResult {
	return toolresult.Denied(rt.name, d)
}

func refused(rt *route, err error) *mcp.CallToolResult {
	return toolError("toolwarden refused the approval sent with this call to %s, and did not make the call: %v. Call the tool again without inputResponses or requestState to be asked.", rt.name, err)
}

// needsApproval explains an ask to a client that cannot show prompts.
func (p *Proxy) needsApproval(rt *route, d *host.Decision) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "toolwarden: this call to %s needs the user's approval, but this MCP client cannot show approval prompts (it did not declare the elicitation capability). The call was not made.\n", rt.name)
	toolresult.HowToAllow(&b, d, p.always(), "use an MCP client that supports elicitation", true)
	return mcp.NewToolResultError(b.String())
}

// unanswered is the refusal of a call whose approval prompt the client
// ended without choosing an option (see toolresult.Unanswered).
func (p *Proxy) unanswered(rt *route, d *host.Decision, action mcp.ElicitationResponseAction) *mcp.CallToolResult {
	return toolresult.Unanswered(rt.name, d, action, p.always(), true)
}

// always is where an "always" approval the user adds by hand counts for
// this proxy's host: its store or its approvals file. A local front end
// has no caller, so the grant's scope is the same for every session.
func (p *Proxy) always() toolresult.Always { return toolresult.AlwaysFor(p.h, "") }

// upstreamError turns a failed upstream call into a tool error.
func upstreamError(rt *route, err error) *mcp.CallToolResult {
	return toolresult.UpstreamFailed(rt.name, rt.up, err, "toolwarden wrap/proxy --max-result-bytes N")
}
