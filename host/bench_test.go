package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
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
	h := testhost.New(b, benchConfig, host.Defaults())
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

// BenchmarkCheckWithPlugins is BenchmarkCheck with the first-party
// plugins configured: "none" is the baseline in the same run, "trifecta"
// the plugin the docs recommend for everyone, "trifecta+argguard" both.
// The session has read private data and untrusted content, so trifecta
// reads the labels and asks (the slow path, not its early exit).
func BenchmarkCheckWithPlugins(b *testing.B) {
	const trifecta = "\n[policies.trifecta]\nbuiltin = \"trifecta\"\n"
	const argguard = "\n[policies.argguard]\nbuiltin = \"argguard\"\n" +
		`config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }, { tool = "*", arg = "command", ask_regex = 'rm\s+-rf' }]` + "\n"
	for _, c := range []struct {
		name, policies string
		settings       host.Settings
	}{
		{"none", "", host.Defaults()},
		{"trifecta", trifecta, host.Defaults()},
		// The native twin: the same rule as a Go plugin in the host's
		// process (host.Settings.WithPlugin), no WebAssembly.
		{"trifecta-native", "", host.Defaults().WithPlugin(nativeTrifecta{})},
		{"trifecta+argguard", trifecta + argguard, host.Defaults()},
	} {
		b.Run(c.name, func(b *testing.B) {
			h := testhost.New(b, benchConfig+"[apps.fs.hints]\nreads_private_data = true\nsees_untrusted_content = true\ncan_exfiltrate = true\n"+c.policies, c.settings)
			tl := tool(b, writeFile)
			call := host.Call{Session: "s", Server: "fs", Tool: tl, Arguments: json.RawMessage(`{"path":"/home/me/src/notes.txt","content":"hello"}`)}
			ctx := context.Background()
			d := h.Check(ctx, call) // pin
			h.Observe(ctx, call, &d, host.Result{})
			d = h.Check(ctx, call)
			if c.name != "none" && (d.Rememberable || !hasCode(&d, "lethal_trifecta")) {
				b.Fatalf("trifecta did not ask: %+v", d.Reasons)
			}
			want := host.Ask
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if d := h.Check(ctx, call); d.Decision != want {
					b.Fatalf("%+v", d)
				}
			}
		})
	}
}

// BenchmarkCheckParallel is BenchmarkCheck from every core at once, sharing
// one session.
func BenchmarkCheckParallel(b *testing.B) {
	h := testhost.New(b, benchConfig, host.Defaults())
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

func hasCode(d *host.Decision, code string) bool {
	for _, r := range d.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}

// nativeTrifecta is the trifecta rule as a Go-native host plugin, the
// native twin of the trifecta module in BenchmarkCheckWithPlugins.
type nativeTrifecta struct{}

func (nativeTrifecta) Name() string                  { return "trifecta" }
func (nativeTrifecta) Matches(app, tool string) bool { return true }
func (nativeTrifecta) CanApprove() bool              { return false }

func (nativeTrifecta) Check(_ context.Context, in *policy.CheckInput) policy.PluginVerdict {
	if !in.Caps.CanExfiltrate || !slices.Contains(in.Labels, "private_data_seen") || !slices.Contains(in.Labels, "untrusted_content_seen") {
		return policy.PluginVerdict{Verdict: policy.Abstain}
	}
	return policy.PluginVerdict{Verdict: policy.Ask, Code: "lethal_trifecta",
		Reason: "this session has read private data and untrusted content, and " + strconv.Quote(in.Tool.Name) + " can send data out (lethal trifecta)"}
}

func (nativeTrifecta) Observe(_ context.Context, in *policy.ObserveInput) policy.ObserveResult {
	var labels []string
	if in.Caps.ReadsPrivateData {
		labels = append(labels, "private_data_seen")
	}
	if in.Caps.SeesUntrustedContent {
		labels = append(labels, "untrusted_content_seen")
	}
	return policy.ObserveResult{Labels: labels}
}
