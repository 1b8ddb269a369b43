package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Guest entries through the real proxy, counted by a guest: the counter
// plugin (testdata/counter.wat) adds 1 to a session counter each time a
// check or an observe enters it, and the host keeps the counters, so they
// count entries whatever instance ran them. With trifecta and argguard
// beside it, each tools/call enters every plugin's check once and the
// observer once: after three calls the counters read 3 and 3, the audit
// log holds three check and three observe records, and each decision has
// one step per plugin. A proxy that decided a call twice, or observed it
// twice, would count 6.
func TestEachProxiedCallEntersEachPluginOnce(t *testing.T) {
	t.Parallel()
	everyBin := npmServer(t, "mcp-server-everything")
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	cfg := writeFile(t, "calls.toml", fmt.Sprintf(`
[mcp_servers.everything]
command = %q

[policies.trifecta]
builtin = "trifecta"

[policies.argguard]
builtin = "argguard"
config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }]

[policies.counter]
wasm = %q
`, everyBin, filepath.Join(root, "internal", "e2e", "testdata", "counter.wasm")))
	const calls = 3
	var steps []tsStep
	for i := range calls {
		steps = append(steps, tsStep{Op: "call", Name: "everything__echo", Arguments: map[string]any{"message": fmt.Sprint("call ", i)}})
	}
	res := runTS(t, false, nil, steps, twBin, append(proxyArgs(t, cfg), "--audit", audit)...)
	if len(res.Results) != calls {
		t.Fatalf("%d results, want %d: %+v", len(res.Results), calls, res.Results)
	}
	for i, r := range res.Results {
		if r.IsError {
			t.Fatalf("call %d failed: %+v", i, r)
		}
	}

	type counters struct {
		Counters map[string]int64 `json:"counters"`
	}
	f, err := os.Open(audit)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	records := map[string]int{}
	pluginSteps := map[string]int{}
	var checks, observes int64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Event    string `json:"event"`
			Decision struct {
				Tool  string `json:"tool"`
				Trace []struct {
					Step   string    `json:"step"`
					Source string    `json:"source"`
					State  *counters `json:"state"`
				} `json:"trace"`
				State []struct {
					Plugin string    `json:"plugin"`
					State  *counters `json:"state"`
				} `json:"state"`
			} `json:"decision"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		if r.Decision.Tool != "echo" {
			continue
		}
		records[r.Event]++
		for _, s := range r.Decision.Trace {
			if s.Step != "plugin" {
				continue
			}
			pluginSteps[s.Source]++
			if s.Source == "counter" && s.State != nil {
				checks = s.State.Counters["checks"]
			}
		}
		for _, s := range r.Decision.State {
			if s.Plugin == "counter" && s.State != nil {
				observes = s.State.Counters["observes"]
			}
		}
	}
	if records["check"] != calls || records["observe"] != calls {
		t.Errorf("%d calls made %d check and %d observe records, want %d each", calls, records["check"], records["observe"], calls)
	}
	for _, p := range []string{"trifecta", "argguard", "counter"} {
		if pluginSteps[p] != calls {
			t.Errorf("plugin %s ran in %d decisions of %d calls (steps: %v)", p, pluginSteps[p], calls, pluginSteps)
		}
	}
	if checks != calls || observes != calls {
		t.Errorf("the guest counted %d checks and %d observes in %d calls, want %d each", checks, observes, calls, calls)
	}
}
