package host_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// BenchmarkCheckWithPluginsVaried is BenchmarkCheckWithPlugins/
// trifecta+argguard on calls whose arguments change from one call to the
// next, as in a real session: the plugins cannot answer from their last
// check, so every decision enters both guests. It is how a build's way of
// stopping guests (internal/plugin, -tags toolwarden_wazero_interrupt) is felt
// in a decision; compare the two builds' test binaries in one run
// (docs/plugins.md, "Two ways to stop a guest").
func BenchmarkCheckWithPluginsVaried(b *testing.B) {
	const policies = "\n[policies.trifecta]\nbuiltin = \"trifecta\"\n" +
		"\n[policies.argguard]\nbuiltin = \"argguard\"\n" +
		`config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }, { tool = "*", arg = "command", ask_regex = 'rm\s+-rf' }]` + "\n"
	h := testhost.New(b, benchConfig+"[apps.fs.hints]\nreads_private_data = true\nsees_untrusted_content = true\ncan_exfiltrate = true\n"+policies, host.Defaults())
	tl := tool(b, writeFile)
	calls := make([]host.Call, 64)
	for i := range calls {
		args := `{"path":"/home/me/src/notes-` + strconv.Itoa(i) + `.txt","content":"hello ` + strconv.Itoa(i) + `"}`
		calls[i] = host.Call{Session: "s", Server: "fs", Tool: tl, Arguments: json.RawMessage(args)}
	}
	ctx := context.Background()
	d := h.Check(ctx, calls[0]) // pin
	h.Observe(ctx, calls[0], &d, host.Result{})
	for _, c := range calls {
		if d := h.Check(ctx, c); d.Decision != host.Ask {
			b.Fatalf("trifecta did not ask: %+v", d.Reasons)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d := h.Check(ctx, calls[i%len(calls)]); d.Decision != host.Ask {
			b.Fatalf("%+v", d)
		}
	}
}
