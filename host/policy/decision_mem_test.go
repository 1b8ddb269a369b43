package policy_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/host/hints"
	"github.com/toolwarden/toolwarden/host/policy"
)

// decideTool decides one call of a destructive write_file (whose title is
// title) with the given plugins.
func decideTool(t *testing.T, title string, noTrace bool, plugins ...policy.Checker) policy.Decision {
	t.Helper()
	cfg, err := config.LoadBytes("t.toml", []byte("[apps.fs]\ndestructive_enabled = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := policy.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	def := `{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`
	if title != "" {
		def = `{"name":"write_file","title":"` + title + `","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`
	}
	tool, err := hints.ParseTool([]byte(def))
	if err != nil {
		t.Fatal(err)
	}
	return rules.Decide(context.Background(), &policy.Input{Session: "s", Server: "fs", Tool: tool,
		Arguments: json.RawMessage(`{"path":"/repo/a","content":"x"}`), Plugins: plugins, NoTrace: noTrace})
}

// Every decision owns its trace, reasons, plugin asks and prompt: a caller
// that changes one decision (or appends to its slices within their
// capacity) changes no other, earlier or later.
func TestDecisionsNeverShareTheirMemory(t *testing.T) {
	t.Parallel()
	allow := flagger{"a", policy.PluginVerdict{Verdict: policy.Allow}}
	for _, tc := range []struct {
		name    string
		noTrace bool
		plugins []policy.Checker
	}{
		{"an ask without plugins, traced", false, nil},
		{"an ask without plugins or trace", true, nil},
		{"an ask with two plugins, traced", false, []policy.Checker{askFlagging("p", false, "path"), allow}},
		{"an ask with two plugins, without trace", true, []policy.Checker{askFlagging("p", false, "path"), allow}},
		{"an ask with more plugins than the memory has room for", false, []policy.Checker{
			askFlagging("p", false, "path"), askFlagging("q", false, "content"), askFlagging("r", true), allow}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := decideTool(t, "", tc.noTrace, tc.plugins...)
			second := decideTool(t, "", tc.noTrace, tc.plugins...)
			want := decideTool(t, "", tc.noTrace, tc.plugins...)
			if first.Prompt == nil || second.Prompt == nil || len(first.Reasons) == 0 {
				t.Fatalf("want asks with reasons, got %+v", first)
			}
			if first.Prompt == second.Prompt {
				t.Fatal("two decisions share one prompt")
			}
			// Write everything the caller owns, and append within capacity.
			for i := range first.Reasons {
				first.Reasons[i] = policy.Reason{Source: "mutated", Code: "mutated", Message: "mutated"}
			}
			first.Reasons = append(first.Reasons, policy.Reason{Message: "appended"})
			for i := range first.Trace {
				first.Trace[i] = policy.Step{Step: "mutated", Elapsed: time.Hour}
			}
			first.Trace = append(first.Trace, policy.Step{Step: "appended"})
			*first.Prompt = policy.Prompt{Title: "mutated", Message: "mutated"}
			for _, d := range []policy.Decision{second, decideTool(t, "", tc.noTrace, tc.plugins...)} {
				if !reflect.DeepEqual(stripElapsed(d), stripElapsed(want)) {
					t.Errorf("a decision changed with another one:\n got %+v\nwant %+v", d, want)
				}
			}
			if tc.noTrace && second.Trace != nil {
				t.Errorf("a decision without trace has one: %+v", second.Trace)
			}
		})
	}
}

// stripElapsed returns d with a copy of its trace without the plugins'
// times, which differ from call to call.
func stripElapsed(d policy.Decision) policy.Decision {
	if d.Trace != nil {
		tr := append([]policy.Step(nil), d.Trace...)
		for i := range tr {
			tr[i].Elapsed = 0
		}
		d.Trace = tr
	}
	if d.Prompt != nil {
		p := *d.Prompt
		d.Prompt = &p
	}
	return d
}

// The prompt's title names the tool (and its title when that differs from
// its name) and the server; its message joins every reason.
func TestPromptTitleAndMessage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, title string
		plugins     []policy.Checker
		wantTitle   string
		wantMessage string
	}{
		{"a tool without a title", "", nil, "Allow write_file on fs?", "auto: tool is destructive"},
		{"a tool whose title is its name", "write_file", nil, "Allow write_file on fs?", "auto: tool is destructive"},
		{"a tool with a title of its own", "Write a file", nil, "Allow Write a file (write_file) on fs?", "auto: tool is destructive"},
		{"a text longer than the decision's room for it", "Write a file anywhere, replacing whatever was there before", nil,
			"Allow Write a file anywhere, replacing whatever was there before (write_file) on fs?", "auto: tool is destructive"},
		{"two reasons", "", []policy.Checker{askFlagging("p", true, "path")},
			"Allow write_file on fs?", "auto: tool is destructive; looked at path"},
		{"three reasons", "Write", []policy.Checker{askFlagging("p", true, "path"), askFlagging("q", true, "content")},
			"Allow Write (write_file) on fs?", "auto: tool is destructive; looked at path; looked at content"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decideTool(t, tc.title, false, tc.plugins...)
			if d.Prompt == nil {
				t.Fatalf("no prompt: %+v", d)
			}
			if d.Prompt.Title != tc.wantTitle || d.Prompt.Message != tc.wantMessage {
				t.Errorf("title %q message %q, want %q and %q", d.Prompt.Title, d.Prompt.Message, tc.wantTitle, tc.wantMessage)
			}
		})
	}
}

// sleeper is a flagger (prompt_test.go) that takes at least d to answer.
type sleeper struct {
	flagger
	d time.Duration
}

func (s sleeper) Check(ctx context.Context, in *policy.CheckInput) policy.PluginVerdict {
	time.Sleep(s.d)
	return s.flagger.Check(ctx, in)
}

// A plugin step's Elapsed is the time the plugin took: at least what a
// plugin that sleeps slept, for each plugin on its own.
func TestPluginStepsCarryTheirElapsedTime(t *testing.T) {
	t.Parallel()
	d := decideTool(t, "", false, sleeper{flagger{name: "a"}, 3 * time.Millisecond}, sleeper{flagger{name: "b"}, 2 * time.Millisecond})
	var got []time.Duration
	for _, st := range d.Trace {
		if st.Step == policy.StepPlugin {
			got = append(got, st.Elapsed)
		}
	}
	if len(got) != 2 || got[0] < 3*time.Millisecond || got[1] < 2*time.Millisecond {
		t.Fatalf("plugin steps took %v, want at least [3ms 2ms]", got)
	}
	if strings.Join(traceSteps(d), ",") != "hints,capabilities,visibility,approval_mode,plugin,plugin,approval_policy,decision" {
		t.Errorf("trace %v", traceSteps(d))
	}
}

func traceSteps(d policy.Decision) []string {
	var out []string
	for _, st := range d.Trace {
		out = append(out, st.Step)
	}
	return out
}
