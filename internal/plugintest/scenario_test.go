package plugintest

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/plugin"
)

// runFile parses a case file and runs it against the WAT example plugin of
// pdk/testdata/conformance (observe adds "tainted" after untrusted content;
// check asks before exfiltration from a tainted session).
func runFile(t *testing.T, text string) []Result {
	t.Helper()
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	bin, err := os.ReadFile("../../pdk/testdata/conformance/example.wasm")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("scenario.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Run(ctx, rt, bin, "example", nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const exfilCall = `{"capabilities":{"reads_private_data":false,"sees_untrusted_content":false,"can_exfiltrate":true},"tool":{"name":"send"}}`
const readWebCall = `{"capabilities":{"reads_private_data":false,"sees_untrusted_content":true,"can_exfiltrate":false},"tool":{"name":"fetch"}}`

func TestScenario(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		steps string
		// want are substrings of the problems; none means the case passes.
		want []string
	}{
		{"a label observe adds is in the session of the next check",
			`[{"event":"check","call":` + exfilCall + `,"expect":{"decision":"abstain"}},
			  {"event":"observe","call":` + readWebCall + `,"expect":{"labels":["tainted"],"session_labels":["tainted"]}},
			  {"event":"check","call":` + exfilCall + `,"expect":{"decision":"ask","code":"tainted_exfiltration"}}]`, nil},
		{"a step without a call reuses the previous step's",
			`[{"event":"observe","call":` + readWebCall + `},
			  {"event":"check","call":` + exfilCall + `,"expect":{"decision":"ask"}},
			  {"event":"observe","expect":{"labels":[],"session_labels":["tainted"]}}]`, nil},
		{"labels are not carried backwards: a check before the observe sees none",
			`[{"event":"check","call":` + exfilCall + `,"expect":{"decision":"ask"}},
			  {"event":"observe","call":` + readWebCall + `}]`,
			[]string{"step 1 (check): decision: want ask, got abstain", "(steps 2-2 not run)"}},
		{"a list step hides as the plugin says",
			`[{"event":"list","tools":[{"name":"delete_everything"},{"name":"read"}],"expect":{"hide":["delete_everything"]}}]`, nil},
		{"a named step is named in its failure",
			`[{"name":"taint","event":"observe","call":` + readWebCall + `,"expect":{"labels":[]}}]`,
			[]string{`step 1 (observe: taint): labels: want [], got [tainted]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := `{"plugin":{"name":"example","config":{"blocked_tool":"delete_everything"}},
				"cases":[{"name":"s","session":{"id":"s1","labels":[]},"steps":` + tt.steps + `}]}`
			res := runFile(t, file)
			if len(res) != 1 {
				t.Fatalf("want 1 result, got %+v", res)
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

func TestSessionLabelsOutsideAScenarioIsAProblem(t *testing.T) {
	t.Parallel()
	res := runFile(t, `{"plugin":{"name":"example","config":{"blocked_tool":"x"}},
		"cases":[{"name":"one event","event":"observe","call":`+readWebCall+`,"expect":{"session_labels":["tainted"]}}]}`)
	if len(res) != 1 || len(res[0].Problems) != 1 || !strings.Contains(res[0].Problems[0], "only a step of a scenario") {
		t.Fatalf("want one problem about session_labels, got %+v", res)
	}
}

func TestInitialSessionLabelsAreSentSortedWithTheCaseSessionID(t *testing.T) {
	t.Parallel()
	s, err := newSession([]byte(`{"id":"abc","labels":["b","a","b"],"future":1}`))
	if err != nil {
		t.Fatal(err)
	}
	s.add([]string{"c", "a"})
	if got, want := string(s.json()), `{"future":1,"id":"abc","labels":["a","b","c"]}`; got != want {
		t.Fatalf("session %s, want %s", got, want)
	}
}
