package sdk_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/sdk"
)

// files is a small in-process MCP server over an in-memory file system:
// read_file (read-only), write_file (destructive, with a raw schema),
// delete_file (destructive). It records every call that reached it.
type files struct {
	srv *server.MCPServer

	mu    sync.Mutex
	data  map[string]string
	calls []string // "tool arguments-as-received"
}

// writeSchema is write_file's raw input schema.
const writeSchema = `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`

func newFiles(opts ...server.ServerOption) *files {
	f := &files{data: map[string]string{"/notes.txt": "hello"}}
	f.srv = server.NewMCPServer("files", "1.0.0", append([]server.ServerOption{server.WithToolCapabilities(true)}, opts...)...)
	f.srv.AddTool(mcp.NewTool("read_file",
		mcp.WithDescription("Read a file."),
		mcp.WithString("path", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	), f.read)
	f.srv.AddTool(mcp.NewToolWithRawSchema("write_file", "Write a file.", json.RawMessage(writeSchema)), f.write)
	f.srv.AddTool(mcp.NewTool("delete_file",
		mcp.WithDescription("Delete a file."),
		mcp.WithString("path", mcp.Required()),
		mcp.WithDestructiveHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), f.delete)
	f.srv.AddResource(mcp.NewResource("mem:///notes.txt", "notes"), func(ctx context.Context, r mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		return []mcp.ResourceContents{mcp.TextResourceContents{URI: r.Params.URI, Text: "hello"}}, nil
	})
	f.srv.AddPrompt(mcp.NewPrompt("review"), func(ctx context.Context, r mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return mcp.NewGetPromptResult("review", []mcp.PromptMessage{mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("review this"))}), nil
	})
	return f
}

func (f *files) record(r mcp.CallToolRequest) {
	f.mu.Lock()
	f.calls = append(f.calls, r.Params.Name+" "+string(r.Params.RawArguments))
	f.mu.Unlock()
}

func (f *files) read(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	f.record(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	text, ok := f.data[r.GetString("path", "")]
	if !ok {
		return mcp.NewToolResultError("no such file"), nil
	}
	return mcp.NewToolResultText(text), nil
}

func (f *files) write(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	f.record(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data[r.GetString("path", "")] = r.GetString("content", "")
	return mcp.NewToolResultText("written"), nil
}

func (f *files) delete(ctx context.Context, r mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	f.record(r)
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.data, r.GetString("path", ""))
	return mcp.NewToolResultText("deleted"), nil
}

// ran lists the calls that reached the server.
func (f *files) ran() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// connect starts an initialized in-process client of the server.
func (f *files) connect(tb testing.TB, opts ...client.ClientOption) *client.Client {
	tb.Helper()
	c, err := client.NewInProcessClientWithOptions(f.srv, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test-agent", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// call makes a tool call and returns its text and whether it is an error.
func call(tb testing.TB, c client.MCPClient, tool string, args map[string]any) (string, bool) {
	tb.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		tb.Fatalf("%s: %v", tool, err)
	}
	return text(res), res.IsError
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func names(tools []mcp.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	sort.Strings(out)
	return out
}

// labeler is a Go plugin: observe labels the session with every tool that
// ran in it.
type labeler struct{}

func (labeler) Name() string               { return "labeler" }
func (labeler) Matches(app, t string) bool { return true }
func (labeler) Observe(ctx context.Context, in *policy.ObserveInput) policy.ObserveResult {
	return policy.ObserveResult{Labels: []string{"ran_" + in.Tool.Name}}
}

// recorder is an Approver that records the questions and gives one answer
// (or error).
type recorder struct {
	mu        sync.Mutex
	answer    sdk.Answer
	err       error
	questions []*sdk.Question
}

func (r *recorder) Approve(ctx context.Context, q *sdk.Question) (sdk.Answer, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.questions = append(r.questions, q)
	return r.answer, r.err
}

func (r *recorder) asked() []*sdk.Question {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*sdk.Question(nil), r.questions...)
}
