package host_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolwarden/toolwarden/host"
)

// benchCall is a realistic call as it arrives: a filesystem write with its
// full tool definition, as `toolwarden check` reads it.
const benchCall = `{"session":"s","server":"fs","tool":` + writeFile + `,"arguments":{"path":"/home/me/src/notes.txt","content":"hello"}}`

const benchConfig = `
[apps._default]
open_world_enabled = true
[apps.fs]
destructive_enabled = true
default_tools_approval_mode = "auto"
[apps.fs.tools.read_file]
approval_mode = "approve"
[mcp_servers.fs]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "/home/me/src"]
`

// BenchmarkCheck is one host decision without plugins, the tool already
// parsed and pinned: what a proxy pays per tools/call.
func BenchmarkCheck(b *testing.B) {
	h := newHost(b, benchConfig, host.Defaults())
	tl := tool(b, writeFile)
	call := host.Call{Session: "s", Server: "fs", Tool: tl, Arguments: json.RawMessage(`{"path":"/home/me/src/notes.txt","content":"hello"}`)}
	ctx := context.Background()
	h.Check(ctx, call) // pin
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d := h.Check(ctx, call); d.Decision != host.Ask {
			b.Fatal(d.Decision)
		}
	}
}

// BenchmarkCheckParallel is BenchmarkCheck from every core at once, sharing
// one session.
func BenchmarkCheckParallel(b *testing.B) {
	h := newHost(b, benchConfig, host.Defaults())
	tl := tool(b, writeFile)
	call := host.Call{Session: "s", Server: "fs", Tool: tl, Arguments: json.RawMessage(`{}`)}
	ctx := context.Background()
	h.Check(ctx, call)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h.Check(ctx, call)
		}
	})
}

// BenchmarkBaselineDecodeCall is the baseline for BenchmarkCheck: decoding the
// same call with encoding/json, which any Go MCP stack does per call anyway.
func BenchmarkBaselineDecodeCall(b *testing.B) {
	var v struct {
		Session   string
		Server    string
		Tool      map[string]any
		Arguments map[string]any
	}
	data := []byte(benchCall)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v.Tool, v.Arguments = nil, nil
		if err := json.Unmarshal(data, &v); err != nil {
			b.Fatal(err)
		}
	}
}
