package sdk_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/sdk"
)

// The guard's cost per call, against host.Check (the decision alone) in
// the same run: BenchmarkGuardCallToolNoServer over BenchmarkHostCheck is
// the guard's overhead on top of the decision; BenchmarkGuardCallTool over
// BenchmarkDirectCallTool is what it adds to a call through an in-process
// mcp-go server whose tool does nothing.

var noopDef = mcp.NewTool("noop", mcp.WithString("path"),
	mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false), mcp.WithOpenWorldHintAnnotation(false))

var noopArgs = json.RawMessage(`{"path":"/tmp/x"}`)

func benchHost(b *testing.B) *host.Host {
	h, err := host.New(context.Background(), config.Default(), host.Defaults())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func noopServer(b *testing.B) *client.Client {
	srv := server.NewMCPServer("bench", "1")
	srv.AddTool(noopDef, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	return exampleClient(srv)
}

func noopRequest() mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = "noop"
	req.Params.RawArguments = noopArgs
	return req
}

func BenchmarkHostCheck(b *testing.B) {
	h := benchHost(b)
	raw, _ := json.Marshal(noopDef)
	tool, err := host.ParseTool(raw)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	c := host.Call{Session: "s", Server: "bench", Tool: tool, Arguments: noopArgs}
	b.ReportAllocs()
	for b.Loop() {
		if d := h.Check(ctx, c); d.Decision != host.Allow {
			b.Fatal(d.Decision)
		}
	}
}

func BenchmarkGuardCallToolNoServer(b *testing.B) {
	g := sdk.New(benchHost(b))
	c := g.Session("s").Client("bench", &staticClient{})
	benchCalls(b, c)
}

func BenchmarkDirectCallTool(b *testing.B) {
	benchCalls(b, noopServer(b))
}

func BenchmarkGuardCallTool(b *testing.B) {
	g := sdk.New(benchHost(b))
	benchCalls(b, g.Session("s").Client("bench", noopServer(b)))
}

func benchCalls(b *testing.B, c client.MCPClient) {
	ctx := context.Background()
	req := noopRequest()
	b.ReportAllocs()
	for b.Loop() {
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// staticClient is a server that answers at once, without a transport: it
// lists noop and returns one result for every call.
type staticClient struct{ client.MCPClient }

var okResult = mcp.NewToolResultText("ok")

func (*staticClient) ListTools(context.Context, mcp.ListToolsRequest) (*mcp.ListToolsResult, error) {
	return &mcp.ListToolsResult{Tools: []mcp.Tool{noopDef}}, nil
}

func (*staticClient) CallTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return okResult, nil
}

func (*staticClient) OnNotification(func(mcp.JSONRPCNotification)) {}
