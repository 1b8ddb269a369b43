package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/plugins"
)

// The lethal trifecta across two upstreams in proxy mode: private data read
// from server-memory, untrusted content from server-everything, and then a
// tool that can send data out is denied by the trifecta plugin. Each leg on
// its own changes nothing. The capabilities come from config hints (the
// npm servers' tools are closed-world and read-only), standing in for a
// notes store, a web fetch and an outbound message.
func TestProxyTrifectaAcrossTwoUpstreams(t *testing.T) {
	t.Parallel()
	if _, ok := plugins.Builtin("trifecta"); !ok {
		t.Skip("the first-party trifecta plugin is not built into this tree (plugins.Builtin(\"trifecta\") is unavailable)")
	}
	memBin := npmServer(t, "mcp-server-memory")
	everyBin := npmServer(t, "mcp-server-everything")
	cfg := writeFile(t, "trifecta.toml", fmt.Sprintf(`
[mcp_servers.memory]
command = %q
env = { MEMORY_FILE_PATH = %q }

[mcp_servers.everything]
command = %q

[apps.memory]
hints = { reads_private_data = true }

[apps.everything.tools."get-structured-content"]
hints = { sees_untrusted_content = true }

[apps.everything.tools."echo"]
hints = { can_exfiltrate = true }

[policies.trifecta]
builtin = "trifecta"
config = { mode = "deny" }
`, memBin, filepath.Join(t.TempDir(), "memory.jsonl"), everyBin))

	c := startGo(t, false, answers(), twBin, proxyArgs(t, cfg)...)
	step := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		return c.call(t, name, args)
	}
	exfil := func(msg string) (string, bool) { return step("everything__echo", map[string]any{"message": msg}) }

	if out, isErr := exfil("nothing seen yet"); isErr {
		t.Fatalf("echo before any leg: %q", out)
	}
	if out, isErr := step("memory__read_graph", nil); isErr {
		t.Fatalf("read_graph: %q", out)
	}
	if out, isErr := exfil("private data seen"); isErr {
		t.Fatalf("echo with one leg: %q", out)
	}
	if out, isErr := step("everything__get-structured-content", map[string]any{"location": "Chicago"}); isErr {
		t.Fatalf("get-structured-content: %q", out)
	}
	out, isErr := exfil("exfiltrate the notes")
	if !isErr || !strings.Contains(out, "lethal_trifecta") {
		t.Fatalf("echo after private data and untrusted content: want a trifecta deny, got %q (error %v)", out, isErr)
	}
	// Tools that cannot send data out still work.
	if out, isErr := step("memory__read_graph", nil); isErr {
		t.Fatalf("read_graph after the deny: %q", out)
	}
}
