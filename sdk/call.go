package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/toolresult"
)

// CallTool decides the call and makes it only when it is allowed: outright,
// or by the approver's answer to an ask. A call that is not made gets a
// tool error (IsError) that says why, as toolwarden's proxy answers it, so
// the model reads the refusal; the error return is kept for the server's
// own failures. After a call was made, the host observes its result.
func (c *guarded) CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	if c.s.ended.Load() {
		return toolresult.Error("toolwarden: conversation %s has ended; the call to %s was not made.", c.s.id, name), nil
	}
	e, err := c.up.lookup(ctx, name)
	if err != nil {
		return toolresult.Error("toolwarden: cannot read the tools of server %s to decide the call to %s (%v); the call was not made.", c.up.name, name, err), nil
	}
	if e == nil {
		return toolresult.Error("toolwarden: there is no tool %q (list the tools again: its server may no longer offer it).", name), nil
	}
	args, err := arguments(req.Params)
	if err != nil {
		return toolresult.Error("toolwarden: the arguments of %s %v; the call was not made.", name, err), nil
	}
	// The server gets exactly the bytes that were decided on.
	req.Params.RawArguments = args

	call := host.Call{Session: c.s.id, Server: c.up.name, Tool: e.tool, Arguments: args, Context: c.s.g.contexts[c.up.name]}
	var (
		d        host.Decision
		drifted  bool
		always   bool
		observes bool
	)
	g := c.s.g
	g.mu.RLock()
	d = g.h.Check(ctx, call)
	// Whether the host that decided observes: a host swapped in while the
	// call runs does not observe calls it did not decide.
	observes = g.h.Observes()
	if d.Decision == policy.Ask {
		// Check pins a tool's first definition and never moves a pin (only
		// an approval does), so the pin says whether this one drifted.
		pinned, seen := g.h.Session(c.s.id).Pinned(c.up.name, e.tool.Name)
		drifted = seen && pinned != e.tool.HashHex
		always = g.h.CanRememberAlways()
	}
	g.mu.RUnlock()

	switch d.Decision {
	case policy.Deny:
		return toolresult.Denied(name, &d), nil
	case policy.Ask:
		// The question keeps the decision: a copy, so that d itself stays
		// off the heap on the calls that are not asked about.
		asked := d
		if refusal := c.s.ask(ctx, name, call, &asked, drifted, always); refusal != nil {
			return refusal, nil
		}
	}
	return c.forward(ctx, req, call, &d, observes)
}

// ask puts the question to the approver and records an allow; it returns
// the refusal when the call must not be made.
func (s *Session) ask(ctx context.Context, name string, call host.Call, d *host.Decision, drifted, always bool) *mcp.CallToolResult {
	g := s.g
	var chans *channel.Runner
	g.use(func(h *host.Host) { chans = g.channels(h, s.id, d) }) // channels.go
	q := newQuestion(call, d, drifted, always)
	var ans Answer
	if chans.Uses() {
		var refusal *mcp.CallToolResult
		if ans, refusal = s.askChannels(ctx, name, q, chans); refusal != nil {
			return refusal
		}
	} else {
		if g.approver == nil {
			return toolresult.Error("toolwarden: this call to %s needs the user's approval, but the agent has no approver (sdk.WithApprover); the call was not made.\nWhy: %s", name, toolresult.Reasons(d))
		}
		var err error
		ans, err = g.approver.Approve(ctx, q)
		if err == nil {
			err = ctx.Err()
		}
		var noOne *NoOneAskedError
		if errors.As(err, &noOne) {
			return toolresult.NoOneAsked(name, d, noOneAskedInstead, noOneAskedFirst, g.approvals())
		}
		if err != nil {
			return toolresult.Error("toolwarden: %s was not approved (%v), so it was denied.", name, err)
		}
	}
	if !q.Offers(ans) {
		return toolresult.Error("toolwarden: the answer %q was not offered for %s (offered: %s), so the call was denied.", ans, name, optionList(q.Options))
	}
	scope, allow := ans.scope()
	if !allow {
		return toolresult.Error("toolwarden: the user denied this call to %s. Do not retry it unless the user asks.", name)
	}
	g.mu.RLock()
	err := g.h.Approve(s.id, d, scope)
	g.mu.RUnlock()
	if err != nil {
		return toolresult.Error("toolwarden: could not record the approval of %s: %v", name, err)
	}
	return nil
}

// newQuestion builds the question for an ask, with the proxy's rendering.
func newQuestion(call host.Call, d *host.Decision, drifted, always bool) *Question {
	aq := channel.NewQuestion(call.Tool.Name, d, call.Arguments, always)
	aq.Drifted = drifted
	q := &Question{
		Session:   call.Session,
		Server:    call.Server,
		Tool:      call.Tool.Name,
		Reasons:   d.Reasons,
		Hints:     d.Hints,
		Arguments: call.Arguments,
		Flagged:   d.Flagged,
		Text:      aq.Message(),
		Drifted:   drifted,
		Decision:  d,
	}
	for _, o := range aq.Options {
		a := Answer(o)
		if (a == AllowSession || a == AllowAlways) && !d.Rememberable {
			continue
		}
		q.Options = append(q.Options, a)
	}
	if !q.Offers(Deny) {
		q.Options = append(q.Options, Deny)
	}
	q.Scope = aq.Scope()
	return q
}

// forward makes the call and observes its outcome, before the agent sees
// it (so labels an observer adds apply to the agent's next call).
func (c *guarded) forward(ctx context.Context, req mcp.CallToolRequest, call host.Call, d *host.Decision, observes bool) (*mcp.CallToolResult, error) {
	res, err := c.up.inner.CallTool(ctx, req)
	if !observes {
		return res, err
	}
	g := c.s.g
	g.mu.RLock()
	defer g.mu.RUnlock()
	r := host.Result{IsError: true}
	switch {
	case err != nil:
		r.Text = err.Error()
	case res == nil:
		r.Text = "no result"
	default:
		r = host.Result{Text: toolresult.Text(res), IsError: res.IsError}
	}
	g.h.Observe(ctx, call, d, r)
	return res, err
}

// arguments are the call's arguments as the server will get them: as the
// agent gave them raw, else encoded.
func arguments(p mcp.CallToolParams) (json.RawMessage, error) {
	var raw []byte
	switch a := p.Arguments.(type) {
	case nil:
		raw = p.RawArguments
	case json.RawMessage:
		raw = a
	case []byte:
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("cannot be encoded (%w)", err)
		}
		raw = b
	}
	if len(p.RawArguments) > 0 {
		raw = p.RawArguments
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}"), nil
	}
	// Whether they are a well-formed object (and one every reader reads
	// alike) is policy's first check: Check denies them otherwise.
	return json.RawMessage(raw), nil
}

func optionList(opts []Answer) string {
	s := make([]string, len(opts))
	for i, o := range opts {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}
