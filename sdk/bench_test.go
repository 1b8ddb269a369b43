package sdk_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
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
	c := exampleClient(srv)
	// An agent lists before it calls, and mcp-go's client does more per
	// call for tools it has listed: the baseline lists too.
	if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
		b.Fatal(err)
	}
	return c
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

// BenchmarkGuardOverhead interleaves a guarded call (over a client that
// answers at once) with a bare host.Check, so that both see the same load,
// and reports their ratio: guard/check - 1 is what the guard adds to the
// decision.
func BenchmarkGuardOverhead(b *testing.B) {
	h := benchHost(b)
	raw, _ := json.Marshal(noopDef)
	tool, _ := host.ParseTool(raw)
	check := host.Call{Session: "s", Server: "bench", Tool: tool, Arguments: noopArgs}
	c := sdk.New(h).Session("s").Client("bench", &staticClient{})
	interleave(b, "guard/check",
		func(ctx context.Context) { h.Check(ctx, check) },
		func(ctx context.Context) { c.CallTool(ctx, noopRequest()) })
}

// BenchmarkGuardOverheadServer interleaves a call through an in-process
// mcp-go server with the same call through the guard, and reports their
// ratio and the guard's added time over a bare host.Check (medians over
// the iterations).
func BenchmarkGuardOverheadServer(b *testing.B) {
	h := benchHost(b)
	raw, _ := json.Marshal(noopDef)
	tool, _ := host.ParseTool(raw)
	check := host.Call{Session: "s", Server: "bench", Tool: tool, Arguments: noopArgs}
	direct := noopServer(b)
	guarded := sdk.New(h).Session("s").Client("bench", noopServer(b))
	ctx := context.Background()
	var ratios, added []float64
	for b.Loop() {
		t0 := time.Now()
		h.Check(ctx, check)
		t1 := time.Now()
		direct.CallTool(ctx, noopRequest())
		t2 := time.Now()
		guarded.CallTool(ctx, noopRequest())
		t3 := time.Now()
		ratios = append(ratios, float64(t3.Sub(t2))/float64(t2.Sub(t1)))
		added = append(added, float64(t3.Sub(t2)-t2.Sub(t1))/float64(t1.Sub(t0)))
	}
	slices.Sort(ratios)
	slices.Sort(added)
	b.ReportMetric(ratios[len(ratios)/2], "guarded/direct")
	b.ReportMetric(added[len(added)/2], "added/check")
}

// interleave runs base and measured alternately, in blocks of 32 each,
// and reports the median over blocks of measured/base under name: on a
// shared machine a burst of load hits a block or two, not the median.
func interleave(b *testing.B, name string, base, measured func(context.Context)) {
	const block = 32
	ctx := context.Background()
	var ratios []float64
	for b.Loop() {
		t0 := time.Now()
		for range block {
			base(ctx)
		}
		t1 := time.Now()
		for range block {
			measured(ctx)
		}
		ratios = append(ratios, float64(time.Since(t1))/float64(t1.Sub(t0)))
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], name)
}
