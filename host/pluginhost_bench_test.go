package host_test

import (
	"context"
	"encoding/json"
	"runtime"
	"strconv"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// scalingConfig is benchConfig with trifecta and argguard, and fs's
// capabilities declared so that a tainted session's writes ask.
const scalingConfig = benchConfig + "[apps.fs.hints]\nreads_private_data = true\nsees_untrusted_content = true\ncan_exfiltrate = true\n" +
	"\n[policies.trifecta]\nbuiltin = \"trifecta\"\n" +
	"\n[policies.argguard]\nbuiltin = \"argguard\"\n" +
	`config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }, { tool = "*", arg = "command", ask_regex = 'rm\s+-rf' }]` + "\n"

// scalingHost is the host of the scaling benchmarks: trifecta and argguard
// on a call that asks (its session tainted by an observe), and one such
// call per GOMAXPROCS goroutine, each in a session of its own, checked
// once so that every later Check of it repeats.
func scalingHost(b testing.TB) (*host.Host, []host.Call) {
	b.Helper()
	h := testhost.New(b, scalingConfig, host.Defaults().WithPluginCacheDir(pluginCache))
	tl := tool(b, writeFile)
	ctx := context.Background()
	calls := make([]host.Call, runtime.GOMAXPROCS(0))
	for i := range calls {
		calls[i] = host.Call{Session: "s" + strconv.Itoa(i), Server: "fs", Tool: tl, Arguments: json.RawMessage(`{"path":"/home/me/src/notes.txt","content":"hello"}`)}
		d := h.Check(ctx, calls[i])
		h.Observe(ctx, calls[i], &d, host.Result{})
		if d = h.Check(ctx, calls[i]); d.Decision != host.Ask {
			b.Fatalf("%+v", d.Reasons)
		}
	}
	return h, calls
}
