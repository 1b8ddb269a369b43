package sdk_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/sdk"
)

// An agent on mcp-go changes one value: its client of a server becomes the
// guard's client of it. Read-only calls run, destructive ones are asked
// about, and tools the config hides are neither listed nor run.
func Example() {
	ctx := context.Background()
	cfg, _ := config.LoadBytes("config.toml", []byte(`
[apps.fs.tools.delete_file]
enabled = false
`))
	h, _ := host.New(ctx, cfg, host.Defaults())
	defer h.Close(ctx)

	approver := sdk.ApproverFunc(func(ctx context.Context, q *sdk.Question) (sdk.Answer, error) {
		fmt.Printf("asked: %s on %s, options %v\n", q.Tool, q.Server, q.Options)
		return sdk.AllowOnce, nil
	})
	g := sdk.New(h, sdk.WithApprover(approver))

	var fs client.MCPClient = exampleClient(exampleServer())
	fs = g.Client("fs", fs) // the one change

	tools, _ := fs.ListTools(ctx, mcp.ListToolsRequest{})
	for _, t := range tools.Tools {
		fmt.Println("tool:", t.Name)
	}
	fmt.Println(callText(fs, "read_file", `{"path":"/notes.txt"}`))
	fmt.Println(callText(fs, "write_file", `{"path":"/notes.txt","content":"bye"}`))
	refusal, _, _ := strings.Cut(callText(fs, "delete_file", `{"path":"/notes.txt"}`), " (")
	fmt.Println(refusal)
	// Output:
	// tool: read_file
	// tool: write_file
	// hello
	// asked: write_file on fs, options [allow_once allow_session deny]
	// written
	// error: toolwarden: MCP tool call blocked by app configuration: delete_file is not available
}

// An agent that runs several conversations gives each its session; what
// one conversation approves for itself does not carry over to another.
func ExampleGuard_Session() {
	ctx := context.Background()
	h, _ := host.New(ctx, config.Default(), host.Defaults())
	defer h.Close(ctx)
	g := sdk.New(h, sdk.WithApprover(sdk.ApproverFunc(func(ctx context.Context, q *sdk.Question) (sdk.Answer, error) {
		fmt.Println("asked in", q.Session)
		return sdk.AllowSession, nil
	})))
	c := exampleClient(exampleServer()) // one server connection, shared

	a := g.Session("conv-a").Client("fs", c)
	b := g.Session("conv-b").Client("fs", c)
	callText(a, "write_file", `{"path":"/a","content":"1"}`)
	callText(a, "write_file", `{"path":"/a","content":"2"}`) // remembered in conv-a
	callText(b, "write_file", `{"path":"/b","content":"3"}`) // asked again in conv-b
	// Output:
	// asked in conv-a
	// asked in conv-b
}

// Session.Client binds a client to one conversation for good; its ID is
// what policy and the audit log see.
func ExampleSession_Client() {
	ctx := context.Background()
	h, _ := host.New(ctx, config.Default(), host.Defaults())
	defer h.Close(ctx)
	conv := sdk.New(h).Session("conv-7")
	fs := conv.Client("fs", exampleClient(exampleServer()))
	fmt.Println(conv.ID(), callText(fs, "read_file", `{"path":"/notes.txt"}`))
	// Output:
	// conv-7 hello
}

// Ending a conversation forgets what it remembered, and its clients make
// no more calls.
func ExampleSession_End() {
	ctx := context.Background()
	h, _ := host.New(ctx, config.Default(), host.Defaults())
	defer h.Close(ctx)
	conv := sdk.New(h).Session("conv-1")
	fs := conv.Client("fs", exampleClient(exampleServer()))
	conv.End()
	fmt.Println(callText(fs, "read_file", `{"path":"/notes.txt"}`))
	// Output:
	// error: toolwarden: conversation conv-1 has ended; the call to read_file was not made.
}

// Guard.Client is Session.Client for the guard's one default
// conversation: enough for an agent with a single conversation.
func ExampleGuard_Client() {
	ctx := context.Background()
	h, _ := host.New(ctx, config.Default(), host.Defaults())
	defer h.Close(ctx)
	fs := sdk.New(h, sdk.WithApprover(sdk.DenyAll)).Client("fs", exampleClient(exampleServer()))
	fmt.Println(callText(fs, "write_file", `{"path":"/a","content":"1"}`))
	// Output:
	// error: toolwarden: this call to write_file needs the user's approval, but no one was asked: this agent answers every approval question with sdk.DenyAll. toolwarden denied the call: it was not made.
	// Why: write_file can change files or data: asking [destructive]
	// Hints: readOnlyHint=false destructiveHint=true idempotentHint=false openWorldHint=false
	// To allow it, the user can:
	//   - run the agent with an approver that asks a person (sdk.WithApprover, e.g. sdk.OpenTerminal);
	//   - or set approval_mode = "approve" in [mcp_servers.fs.tools."write_file"] of the toolwarden config (or, for a server the config does not define, in [apps.fs.tools."write_file"]);
	//   - or set approval_channel = "inbox" for this server and answer in the approval inbox (toolwarden inbox).
}

// Reload applies a changed config while the agent runs: the session keeps
// its approvals, the new rules decide the next call, and a config whose
// plugin does not load is refused while the running one keeps deciding.
func ExampleGuard_Reload() {
	ctx := context.Background()
	h, _ := host.New(ctx, config.Default(), host.Defaults())
	defer h.Close(ctx)
	g := sdk.New(h, sdk.WithApprover(sdk.Fixed(sdk.AllowSession)))
	fs := g.Session("conv-1").Client("fs", exampleClient(exampleServer()))
	callText(fs, "write_file", `{"path":"/a","content":"1"}`) // approved for the session

	stricter, _ := config.LoadBytes("config.toml", []byte("[apps.fs.tools.read_file]\nenabled = false\n"))
	fmt.Println(g.Reload(ctx, stricter))
	fmt.Println(callText(fs, "write_file", `{"path":"/a","content":"2"}`))
	fmt.Println(strings.Contains(callText(fs, "read_file", `{"path":"/a"}`), "blocked by app configuration"))

	broken, _ := config.LoadBytes("config.toml", []byte("[policies.mine]\nwasm = \"/nowhere/mine.wasm\"\n"))
	fmt.Println(g.Reload(ctx, broken) != nil, len(g.Host().Config().Policies))
	// Output:
	// <nil>
	// written
	// true
	// true 0
}

// Swap puts another host in place while the agent runs (say, one with
// another approvals file): the session keeps its approvals, and the new
// host decides the next call.
func ExampleGuard_Swap() {
	ctx := context.Background()
	h, _ := host.New(ctx, config.Default(), host.Defaults())
	g := sdk.New(h, sdk.WithApprover(sdk.Fixed(sdk.AllowSession)))
	fs := g.Session("conv-1").Client("fs", exampleClient(exampleServer()))
	callText(fs, "write_file", `{"path":"/a","content":"1"}`) // approved for the session

	cfg, _ := config.LoadBytes("config.toml", []byte("[apps.fs.tools.read_file]\nenabled = false\n"))
	next, _ := host.New(ctx, cfg, host.Defaults())
	old := g.Swap(next)
	old.Close(ctx) // no call uses it any more

	fmt.Println(g.Host() == next)
	fmt.Println(callText(fs, "write_file", `{"path":"/a","content":"2"}`))
	fmt.Println(strings.Contains(callText(fs, "read_file", `{"path":"/a"}`), "blocked by app configuration"))
	// Output:
	// true
	// written
	// true
}

// Guard.Host is the host deciding now.
func ExampleGuard_Host() {
	ctx := context.Background()
	h, _ := host.New(ctx, config.Default(), host.Defaults())
	fmt.Println(sdk.New(h).Host() == h)
	// Output:
	// true
}

// A server author puts the same policy on their own tools: the server lists
// each client only the tools it may see, and asks the client's human
// through elicitation before a destructive call runs.
func ExampleGuard_ServerOption() {
	ctx := context.Background()
	h, _ := host.New(ctx, config.Default(), host.Defaults())
	defer h.Close(ctx)
	g := sdk.New(h)
	srv := exampleServer(g.ServerOption("fs"))

	human := elicitFunc(func(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
		fmt.Println("the client's human is asked about write_file:", strings.Contains(r.Params.Message, "write_file"))
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
			Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"decision": "allow_once"}}}, nil
	})
	c := exampleClient(srv, client.WithElicitationHandler(human))
	fmt.Println(callText(c, "write_file", `{"path":"/a","content":"1"}`))
	// Output:
	// the client's human is asked about write_file: true
	// written
}

// An Approver is one method; ApproverFunc makes a function one. Options
// lists what may be answered; anything else denies the call.
func ExampleApproverFunc() {
	a := sdk.ApproverFunc(func(ctx context.Context, q *sdk.Question) (sdk.Answer, error) {
		if q.Offers(sdk.AllowSession) {
			return sdk.AllowSession, nil
		}
		return sdk.AllowOnce, nil
	})
	q := &sdk.Question{Tool: "write_file", Options: []sdk.Answer{sdk.AllowOnce, sdk.Deny}}
	fmt.Println(a.Approve(context.Background(), q))
	// Output:
	// allow_once <nil>
}

// Fixed answers for runs without a human; when its answer is not offered
// (an ask that cannot be remembered), it allows once.
func ExampleFixed() {
	q := &sdk.Question{Options: []sdk.Answer{sdk.AllowOnce, sdk.Deny}}
	fmt.Println(sdk.Fixed(sdk.AllowSession).Approve(context.Background(), q))
	fmt.Println(sdk.DenyAll.Approve(context.Background(), q))
	// Output:
	// allow_once <nil>
	// deny no one was asked: this agent answers every approval question with sdk.DenyAll. To allow the call, set approval_mode = "approve" in [mcp_servers.<server>.tools."<tool>"] of the toolwarden config, or run the agent with an approver that asks a person (sdk.WithApprover, e.g. sdk.OpenTerminal) or with approval_channel = "inbox"
}

// ParseAnswer reads the answer a flag or a typed line gives.
func ExampleParseAnswer() {
	for _, s := range []string{"once", "session", "deny", "maybe"} {
		a, err := sdk.ParseAnswer(s)
		fmt.Println(a, a.Title(), err)
	}
	// Output:
	// allow_once Allow once <nil>
	// allow_session Allow for this session <nil>
	// deny Deny <nil>
	// deny Deny unknown answer "maybe" (want once, session, always or deny)
}

// NewTerminal asks on any reader and writer; OpenTerminal uses the
// controlling terminal.
func ExampleNewTerminal() {
	var shown strings.Builder
	t := sdk.NewTerminal(strings.NewReader("2\n"), &shown)
	q := &sdk.Question{Text: "toolwarden: Allow write_file?", Options: []sdk.Answer{sdk.AllowOnce, sdk.AllowSession, sdk.Deny}}
	a, err := t.Approve(context.Background(), q)
	fmt.Println(a, err)
	fmt.Print(shown.String())
	// Output:
	// allow_session <nil>
	//
	// toolwarden: Allow write_file?
	//   [1] Allow once
	//   [2] Allow for this session
	//   [3] Deny
	// Answer [1-3, or allow_once, allow_session, deny; empty denies]:
}

// OpenTerminal asks the human at the controlling terminal even when the
// agent's stdin is not theirs; without one (CI), fall back to a fixed
// answer.
func ExampleOpenTerminal() {
	var a sdk.Approver = sdk.DenyAll
	if t, err := sdk.OpenTerminal(); err == nil {
		defer t.Close()
		a = t
	}
	_ = sdk.New(nil, sdk.WithApprover(a))
	fmt.Println("approver ready")
	// Output:
	// approver ready
}

// exampleServer is a small in-process MCP server: read_file (read-only),
// write_file and delete_file (destructive).
func exampleServer(opts ...server.ServerOption) *server.MCPServer {
	srv := server.NewMCPServer("files", "1.0.0", opts...)
	files := map[string]string{"/notes.txt": "hello"}
	srv.AddTool(mcp.NewTool("read_file", mcp.WithString("path"),
		mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(files[r.GetString("path", "")]), nil
		})
	srv.AddTool(mcp.NewTool("write_file", mcp.WithString("path"), mcp.WithString("content"), mcp.WithOpenWorldHintAnnotation(false)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("written"), nil
		})
	srv.AddTool(mcp.NewTool("delete_file", mcp.WithString("path"), mcp.WithOpenWorldHintAnnotation(false)),
		func(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("deleted"), nil
		})
	return srv
}

// exampleClient is an initialized in-process client of srv.
func exampleClient(srv *server.MCPServer, opts ...client.ClientOption) *client.Client {
	c, err := client.NewInProcessClientWithOptions(srv, opts...)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		panic(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "example-agent", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		panic(err)
	}
	return c
}

// callText calls a tool with raw arguments and returns its text, prefixed
// "error: " for a tool error.
func callText(c client.MCPClient, tool, args string) string {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.RawArguments = []byte(args)
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		return "call failed: " + err.Error()
	}
	if res.IsError {
		return "error: " + text(res)
	}
	return text(res)
}

type elicitFunc func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitFunc) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, r)
}

// WithServerContext says where a server resolves relative paths, so that
// path rules judge the file it will touch.
func ExampleWithServerContext() {
	ctx := context.Background()
	h, _ := host.New(ctx, config.Default(), host.Defaults())
	defer h.Close(ctx)
	g := sdk.New(h, sdk.WithServerContext("fs", &host.ServerContext{Cwd: "/srv/data", Home: "/home/me"}))
	fmt.Println(callText(g.Client("fs", exampleClient(exampleServer())), "read_file", `{"path":"/notes.txt"}`))
	// Output:
	// hello
}
