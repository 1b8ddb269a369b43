package sdk

import (
	"context"
	"os"
	"path/filepath"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/toolresult"
)

// ServerOption enforces the guard's policy on the tools of an MCP server
// built with mcp-go, as the [mcp_servers.<name>] named name (and app name):
//
//	srv := server.NewMCPServer("files", "1.0.0", g.ServerOption("files"))
//
// Underneath it is a server.WithToolFilter, so tools/list shows each client
// session only what it may see (and mcp-go refuses calls to the rest), and
// a server.WithToolHandlerMiddleware that decides every call before the
// tool's handler runs and observes it after. Each MCP client session is a
// toolwarden session. An ask goes to the client as an elicitation, as
// toolwarden's proxy asks it: elicitation/create for clients before
// 2026-07-28, a multi round-trip input request bound to a signed, single-use
// request state for later ones; a client that cannot elicit gets a tool
// error saying what needs approval, unless the guard has an Approver, which
// is asked instead.
func (g *Guard) ServerOption(name string) server.ServerOption {
	p := &serverPolicy{
		g:      g,
		name:   name,
		signer: channel.NewSigner(channel.StateTTL, 1024),
		defs:   toolDefs{tools: map[string]*entry{}},
	}
	if sc := g.contexts[name]; sc != nil {
		p.context = sc
	} else {
		p.context = ownContext()
	}
	return func(s *server.MCPServer) {
		p.srv = s
		server.WithToolFilter(p.filter)(s)
		server.WithToolHandlerMiddleware(p.middleware)(s)
		// A client that goes away ends its session, so that a long-running
		// server does not keep every client's state. (A WithHooks given
		// after this option replaces the hooks: sessions are then kept.)
		hooks := s.GetHooks()
		if hooks == nil {
			hooks = &server.Hooks{}
			server.WithHooks(hooks)(s)
		}
		hooks.AddOnUnregisterSession(func(ctx context.Context, cs server.ClientSession) {
			if cs != nil && cs.SessionID() != "" {
				g.Session(sessionPrefix + cs.SessionID()).End()
			}
		})
	}
}

// sessionPrefix marks the toolwarden sessions of MCP client sessions.
const sessionPrefix = "mcp-"

// serverPolicy is ServerOption's state for one server.
type serverPolicy struct {
	g      *Guard
	name   string
	srv    *server.MCPServer
	signer *channel.Signer
	defs   toolDefs
	// context is the server's paths: this process's, unless the guard was
	// told otherwise.
	context *host.ServerContext
}

// ownContext is what a server in this process resolves paths against: the
// process's working directory and home.
func ownContext() *host.ServerContext {
	sc := &host.ServerContext{}
	if wd, err := os.Getwd(); err == nil {
		sc.Cwd = wd
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		sc.Home = home
	}
	return sc
}

// session is the toolwarden session of the request's MCP client session.
func (p *serverPolicy) session(ctx context.Context) string {
	id := p.g.fallback
	if cs := server.ClientSessionFromContext(ctx); cs != nil && cs.SessionID() != "" {
		id = sessionPrefix + cs.SessionID()
	}
	p.g.Session(id) // known to the guard, so that Swap carries it
	return id
}

// filter keeps the tools the client's session may see.
func (p *serverPolicy) filter(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	sid := p.session(ctx)
	parsed := make([]*host.Tool, 0, len(tools))
	for _, t := range tools {
		if e := p.defs.get(t); e != nil {
			parsed = append(parsed, e.tool)
		}
	}
	visible := map[string]bool{}
	p.g.mu.RLock()
	for _, t := range p.g.h.Filter(ctx, sid, p.name, parsed) {
		visible[t.Name] = true
	}
	p.g.mu.RUnlock()
	out := make([]mcp.Tool, 0, len(visible))
	for _, t := range tools {
		if visible[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// middleware decides a call before the tool's handler runs.
func (p *serverPolicy) middleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name := req.Params.Name
		st := p.srv.GetTool(name)
		if st == nil {
			return toolresult.Error("toolwarden: there is no tool %q.", name), nil
		}
		e := p.defs.get(st.Tool)
		if e == nil {
			return toolresult.Error("toolwarden: the definition of %s cannot be read, so no call to it can be decided.", name), nil
		}
		args, err := arguments(req.Params)
		if err != nil {
			return toolresult.Error("toolwarden: the arguments of %s %v; the call was not made.", name, err), nil
		}
		call := host.Call{Session: p.session(ctx), Server: p.name, Tool: e.tool, Arguments: args, Context: p.context}
		p.g.mu.RLock()
		d := p.g.h.Check(ctx, call)
		always := p.g.h.CanRememberAlways()
		p.g.mu.RUnlock()

		answer := server.ElicitationResponse(req.Params.InputResponses, channel.ElicitationID)
		switch {
		case d.Decision == policy.Deny:
			return toolresult.Denied(name, &d), nil
		case answer != nil:
			// An answer on the call must be to a question we asked, about
			// this call: any client can attach one to any call.
			if err := p.signer.Redeem(req.Params.RequestState, channel.BindingFor(call, &d)); err != nil {
				return refusedAnswer(name, err), nil
			}
			delete(req.Params.InputResponses, channel.ElicitationID)
			req.Params.RequestState = ""
			if d.Decision == policy.Ask {
				q := channel.NewQuestion(name, &d, args, always)
				if refusal := p.apply(call, &d, &q, answer); refusal != nil {
					return refusal, nil
				}
			}
		case d.Decision == policy.Ask:
			if res := p.ask(ctx, call, &d, always); res != nil {
				return res, nil
			}
		}
		return p.run(ctx, next, req, call, &d)
	}
}

// ask puts the question to the client. It returns the result to send
// instead of running the tool (a refusal, or a 2026-07-28 input request),
// or nil when the human allowed the call.
func (p *serverPolicy) ask(ctx context.Context, call host.Call, d *host.Decision, always bool) *mcp.CallToolResult {
	name := call.Tool.Name
	q := channel.NewQuestion(name, d, call.Arguments, always)
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if info.ClientCapabilities == nil || !formMode(info.ClientCapabilities.Elicitation) {
			return p.askApprover(ctx, call, d, always)
		}
		state, err := p.signer.Mint(channel.BindingFor(call, d))
		if err != nil {
			return toolresult.Error("toolwarden: cannot ask for approval: %v", err)
		}
		return server.NewInputRequestBuilder(state).Elicit(channel.ElicitationID, q.Params()).ToolResult()
	}
	if !canElicit(ctx) {
		return p.askApprover(ctx, call, d, always)
	}
	res, err := p.srv.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		// The enum shape the client's protocol version defines.
		Params: q.ParamsFor(server.RequestProtocolVersion(ctx)),
	})
	if err != nil {
		return toolresult.Error("toolwarden: %s needs approval, but asking the client failed: %v", name, err)
	}
	return p.apply(call, d, &q, res)
}

// askApprover asks the guard's Approver, when there is one, about a call
// whose client cannot be asked: a server run beside its human (a terminal)
// can still ask there.
func (p *serverPolicy) askApprover(ctx context.Context, call host.Call, d *host.Decision, always bool) *mcp.CallToolResult {
	if p.g.approver == nil {
		return cannotAsk(call.Tool.Name, d)
	}
	return p.g.Session(call.Session).ask(ctx, call.Tool.Name, call, d, false, always)
}

// apply records the human's answer; it returns the refusal when the call
// must not run.
func (p *serverPolicy) apply(call host.Call, d *host.Decision, q *channel.Question, res *mcp.ElicitationResult) *mcp.CallToolResult {
	name := call.Tool.Name
	choice, err := q.Elicited(res)
	if err != nil {
		return refusedAnswer(name, err)
	}
	// A client that ends the prompt without an option (decline, cancel)
	// may have shown it to no one (claude -p, codex exec): the model reads
	// that, as from the proxy, never that the user denied the call.
	p.g.mu.RLock()
	always := toolresult.AlwaysFor(p.g.h, call.Session)
	p.g.mu.RUnlock()
	if toolresult.Ended(res) {
		return toolresult.Unanswered(name, d, res.Action, always, false)
	}
	scope, allow := Answer(choice).scope()
	if !allow {
		return toolresult.Error("toolwarden: the user denied this call to %s. Do not retry it unless the user asks.", name)
	}
	p.g.mu.RLock()
	err = p.g.h.Approve(call.Session, d, scope)
	p.g.mu.RUnlock()
	if err != nil {
		return toolresult.Error("toolwarden: could not record the approval of %s: %v", name, err)
	}
	return nil
}

// run calls the tool's handler and observes the outcome.
func (p *serverPolicy) run(ctx context.Context, next server.ToolHandlerFunc, req mcp.CallToolRequest, call host.Call, d *host.Decision) (*mcp.CallToolResult, error) {
	res, err := next(ctx, req)
	p.g.mu.RLock()
	defer p.g.mu.RUnlock()
	if p.g.h.Observes() {
		r := host.Result{IsError: true}
		switch {
		case err != nil:
			r.Text = err.Error()
		case res != nil:
			r = host.Result{Text: toolresult.Text(res), IsError: res.IsError}
		}
		p.g.h.Observe(ctx, call, d, r)
	}
	return res, err
}

// canElicit reports whether a pre-2026-07-28 client can be asked: it
// declared elicitation (form mode) at initialize, or, in process, has a
// handler for it.
func canElicit(ctx context.Context) bool {
	cs := server.ClientSessionFromContext(ctx)
	if s, ok := cs.(server.SessionWithClientInfo); ok {
		return formMode(s.GetClientCapabilities().Elicitation)
	}
	_, ok := cs.(server.SessionWithElicitation)
	return ok
}

// formMode reports whether an elicitation capability covers form mode: an
// empty capability means form (2025-06-18); one that lists only url does not.
func formMode(c *mcp.ElicitationCapability) bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

func refusedAnswer(name string, err error) *mcp.CallToolResult {
	return toolresult.Error("toolwarden refused the approval sent with this call to %s, and did not make the call: %v. Call the tool again without inputResponses or requestState to be asked.", name, err)
}

func cannotAsk(name string, d *host.Decision) *mcp.CallToolResult {
	return toolresult.Error("toolwarden: this call to %s needs the user's approval, but this MCP client cannot show approval prompts (it did not declare the elicitation capability). The call was not made.\nWhy: %s", name, toolresult.Reasons(d))
}
