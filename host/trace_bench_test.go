package host_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

const (
	traceTrifecta = "\n[policies.trifecta]\nbuiltin = \"trifecta\"\n"
	traceArgguard = "\n[policies.argguard]\nbuiltin = \"argguard\"\n" +
		`config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }, { tool = "*", arg = "command", ask_regex = 'rm\s+-rf' }]` + "\n"
	traceTainted = "[apps.fs.hints]\nreads_private_data = true\nsees_untrusted_content = true\ncan_exfiltrate = true\n"
)

// traceCases are the configurations the trace is measured and checked in:
// no plugins (where the trace is the largest share of a decision) and both
// first-party plugins.
var traceCases = []struct{ name, toml string }{
	{"none", benchConfig},
	{"trifecta+argguard", benchConfig + traceTainted + traceTrifecta + traceArgguard},
}

// primedTraceHost builds a host, pins the tool and labels the session, so
// that every later Check takes the same path.
func primedTraceHost(tb testing.TB, toml string, s host.Settings) (*host.Host, host.Call) {
	tb.Helper()
	h := testhost.New(tb, toml, s)
	call := host.Call{Session: "s", Server: "fs", Tool: tool(tb, writeFile), Arguments: json.RawMessage(`{"path":"/home/me/src/notes.txt","content":"hello"}`)}
	ctx := context.Background()
	d := h.Check(ctx, call)
	h.Observe(ctx, call, &d, host.Result{})
	return h, call
}

// A host built WithoutTrace decides exactly as a traced one (decision,
// reasons, prompt, labels, rememberable), and only the trace is missing.
func TestWithoutTraceDecidesTheSameWithNoTrace(t *testing.T) {
	ctx := context.Background()
	for _, c := range traceCases {
		for _, args := range []string{
			`{"path":"/home/me/src/notes.txt","content":"hello"}`,
			`{"path":"/etc/passwd","content":"x"}`,
			`{"command":"rm -rf /"}`,
			`{"path":`, // invalid arguments: the early deny
		} {
			traced, call := primedTraceHost(t, c.toml, host.Defaults())
			untraced, _ := primedTraceHost(t, c.toml, host.Defaults().WithoutTrace())
			call.Arguments = json.RawMessage(args)
			want := traced.Check(ctx, call)
			got := untraced.Check(ctx, call)
			if len(want.Trace) == 0 {
				t.Fatalf("%s %s: the traced host left the trace empty", c.name, args)
			}
			if len(got.Trace) != 0 {
				t.Fatalf("%s %s: WithoutTrace still built %d trace steps: %+v", c.name, args, len(got.Trace), got.Trace)
			}
			want.Trace = nil
			if !reflect.DeepEqual(want, got) {
				t.Fatalf("%s %s: the decision differs without the trace:\ntraced:   %+v\nuntraced: %+v", c.name, args, want, got)
			}
		}
	}
}

// BenchmarkCheckTrace measures what the trace costs: the same primed call
// with the trace built ("traced") and without (host.Settings.WithoutTrace).
// Run with -count N and compare the medians of untraced and traced.
func BenchmarkCheckTrace(b *testing.B) {
	ctx := context.Background()
	for _, c := range traceCases {
		for _, v := range []struct {
			name string
			s    host.Settings
		}{
			{"traced", host.Defaults()},
			{"untraced", host.Defaults().WithoutTrace()},
		} {
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				h, call := primedTraceHost(b, c.toml, v.s)
				for range 1000 { // warm the plugin instances
					h.Check(ctx, call)
				}
				b.ReportAllocs()
				for b.Loop() {
					if d := h.Check(ctx, call); d.Decision != host.Ask {
						b.Fatal(d.Decision)
					}
				}
			})
		}
	}
}
