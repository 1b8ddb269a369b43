package plugintest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/plugin"
)

// A stateful plugin's state is carried through a scenario as the host
// carries it: testdata/gobudget lets 2 calls per session through (counting
// at check time), then asks; observe records the last tool.
func TestScenarioCarriesPluginState(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go guest")
	}
	t.Parallel()
	out := filepath.Join(t.TempDir(), "gobudget.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", out, "../plugin/testdata/gobudget")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	bin, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)

	const call = `{"tool":{"name":"send"}}`
	tests := []struct {
		name string
		// state and steps of the case
		state, steps string
		want         []string
	}{
		{"a budget of 2 lets 2 calls through and asks at the third",
			``,
			`[{"event":"check","call":` + call + `,"expect":{"decision":"allow","state":{"counters":{"calls":1}}}},
			  {"event":"check","expect":{"decision":"allow","state":{"counters":{"calls":2}}}},
			  {"event":"check","expect":{"decision":"ask","code":"budget_spent","state":{"counters":{"calls":2}}}},
			  {"event":"observe","expect":{"state":{"counters":{"calls":2},"entries":{"last_tool":"send"}}}}]`, nil},
		{"the case's state is where the scenario starts",
			`,"state":{"counters":{"calls":2}}`,
			`[{"event":"check","call":` + call + `,"expect":{"decision":"ask"}}]`, nil},
		{"a state different from the expected one is a problem",
			``,
			`[{"event":"check","call":` + call + `,"expect":{"state":{"counters":{"calls":5}}}}]`,
			[]string{"step 1 (check): state: want counters map[calls:5] entries map[], got counters map[calls:1] entries map[]"}},
		{"an update over the bounds fails the event, as in the host",
			``,
			`[{"event":"check","call":{"tool":{"name":"flood"}},"expect":{"error":"keys, over the bound"}},
			  {"event":"check","call":` + call + `,"expect":{"decision":"allow","state":{"counters":{"calls":1}}}}]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse("state.json", []byte(`{"plugin":{"name":"gobudget","config":{"budget":2}},
				"cases":[{"name":"s","session":{"id":"s1","labels":[]}`+tt.state+`,"steps":`+tt.steps+`}]}`))
			if err != nil {
				t.Fatal(err)
			}
			res, err := f.Run(ctx, rt, bin, "gobudget", nil)
			if err != nil || len(res) != 1 {
				t.Fatalf("%v %+v", err, res)
			}
			got := strings.Join(res[0].Problems, "\n")
			if len(tt.want) == 0 && got != "" {
				t.Fatalf("want the scenario to pass, got:\n%s", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("problems:\n%s\nwant them to contain %q", got, w)
				}
			}
		})
	}
}

// A plugin that did not ask for state gets none, and a case that gives or
// expects one says so.
func TestStateForAPluginWithoutStateIsAProblem(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, state, expect, want string }{
		{"an initial state", `,"state":{"counters":{"n":1}}`, `{}`, "did not ask for state in describe"},
		{"an expected state", ``, `{"state":{"counters":{}}}`, "did not ask for state in describe"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := runFile(t, `{"plugin":{"name":"example","config":{"blocked_tool":"x"}},
				"cases":[{"name":"s"`+tt.state+`,"steps":[{"event":"check","call":`+exfilCall+`,"expect":`+tt.expect+`}]}]}`)
			if len(res) != 1 || !strings.Contains(strings.Join(res[0].Problems, "\n"), tt.want) {
				t.Fatalf("want a problem containing %q, got %+v", tt.want, res)
			}
		})
	}
}
