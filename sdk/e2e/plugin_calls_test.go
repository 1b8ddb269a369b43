package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// One tools/call through the proxy, with trifecta and argguard configured,
// is decided once and observed once: the audit log (the binary's own
// record of every decision) holds one check record, in whose trace each
// plugin ran once, and one observe record. A proxy that decided a call
// twice (to ask, to build the answer, to list) would log two.
func TestPluginsRunOncePerProxiedCall(t *testing.T) {
	t.Parallel()
	everyBin := npmServer(t, "mcp-server-everything")
	audit := t.TempDir() + "/audit.jsonl"
	cfg := writeFile(t, "plugins.toml", fmt.Sprintf(`
[mcp_servers.everything]
command = %q

[policies.trifecta]
builtin = "trifecta"

[policies.argguard]
builtin = "argguard"
config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }]
`, everyBin))
	res := runTS(t, false, nil, []tsStep{
		{Op: "call", Name: "everything__echo", Arguments: map[string]any{"message": "once"}},
	}, twBin, append(proxyArgs(t, cfg), "--audit", audit)...)
	if len(res.Results) != 1 || res.Results[0].IsError {
		t.Fatalf("echo: %+v", res.Results)
	}
	f, err := os.Open(audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events := map[string]int{}
	pluginSteps := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Event    string `json:"event"`
			Decision struct {
				Tool  string `json:"tool"`
				Trace []struct {
					Step   string `json:"step"`
					Source string `json:"source"`
				} `json:"trace"`
			} `json:"decision"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if r.Decision.Tool != "echo" {
			continue
		}
		events[r.Event]++
		for _, s := range r.Decision.Trace {
			if s.Step == "plugin" {
				pluginSteps[s.Source]++
			}
		}
	}
	if events["check"] != 1 || events["observe"] != 1 {
		t.Errorf("one call made %d check and %d observe records, want 1 each", events["check"], events["observe"])
	}
	for _, p := range []string{"trifecta", "argguard"} {
		if pluginSteps[p] != 1 {
			t.Errorf("plugin %s ran %d times in the call's decision, want once (steps: %v)", p, pluginSteps[p], pluginSteps)
		}
	}
}
