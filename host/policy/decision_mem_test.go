package policy_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
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

// reuseCase is one kind of decision to decide into a reused Decision.
type reuseCase struct {
	name  string
	rules *policy.Rules
	in    policy.Input
}

// reuseCases are decisions of every shape a Decision can take: each kind
// of verdict, with and without trace, more plugins than its memory has
// room for, a prompt longer than its room for text, scopes, labels,
// flagged arguments, a hidden tool, invalid arguments, and asks lifted by
// a scoped and by a remembered approval.
func reuseCases(t testing.TB) []reuseCase {
	t.Helper()
	compile := func(text string) *policy.Rules {
		cfg, err := config.LoadBytes("t.toml", []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		rules, err := policy.Compile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return rules
	}
	parse := func(def string) *hints.Tool {
		tool, err := hints.ParseTool([]byte(def))
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	fs := compile("[apps.fs]\ndestructive_enabled = true\n[apps.fs.tools.secret]\nenabled = false\n")
	write := parse(`{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`)
	long := parse(`{"name":"write_file","title":"` + strings.Repeat("Write a file anywhere, replacing it ", 12) + `","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`)
	read := parse(`{"name":"read_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)
	secret := parse(`{"name":"secret","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)
	args := json.RawMessage(`{"path":"/repo/docs/a.md","content":"x"}`)
	allow := flagger{"a", policy.PluginVerdict{Verdict: policy.Allow}}
	labels := flagger{"l", policy.PluginVerdict{Verdict: policy.Allow, Labels: []string{"read:secrets", "net"}}}
	scoped := askScoped("argguard", policy.Scope{Arg: "/path", Glob: "/repo/docs/**"})
	in := func(tool *hints.Tool, noTrace bool, plugins ...policy.Checker) policy.Input {
		return policy.Input{Session: "s", Server: "fs", Tool: tool, Arguments: args, Plugins: plugins, NoTrace: noTrace,
			Context: &policy.ServerContext{Cwd: "/repo"}}
	}
	bad := in(write, false)
	bad.Arguments = json.RawMessage(`{"path":"a","path":"b"}`)
	lifted := in(write, false, scoped)
	lifted.Approvals = grants{{Plugin: "argguard", Code: "arg_needs_approval", Scope: policy.Scope{Arg: "/path", Glob: "/repo/docs/**"}}}
	remembered := in(write, false)
	remembered.Approvals = rememberAll{}
	return []reuseCase{
		{"an ask without plugins", fs, in(write, false)},
		{"an ask without plugins or trace", fs, in(write, true)},
		{"an ask with two plugins", fs, in(write, false, askFlagging("p", false, "path"), allow)},
		{"an ask with two plugins, without trace", fs, in(write, true, askFlagging("p", false, "path"), allow)},
		{"an ask with more plugins than the memory has room for", fs, in(write, false,
			askFlagging("p", false, "path"), askFlagging("q", false, "content"), askFlagging("r", true), allow, labels)},
		{"an ask longer than the room for its text", fs, in(long, false)},
		{"an ask with a plugin, longer than the room for its text", fs, in(long, false, askFlagging("p", true, "path"))},
		{"a scoped ask", fs, in(write, false, scoped)},
		{"an allow that adds labels", fs, in(read, false, labels)},
		{"an allow without plugins", fs, in(read, false)},
		{"a hidden tool", fs, in(secret, false, allow)},
		{"invalid arguments", fs, bad},
		{"a scoped ask lifted by a held scope", fs, lifted},
		{"an ask lifted by a remembered approval", fs, remembered},
	}
}

// rememberAll remembers an approval of every tool.
type rememberAll struct{}

func (rememberAll) Remembered(app, server, connector, tool, hash string) bool { return true }

func caseNamed(t testing.TB, cases []reuseCase, name string) reuseCase {
	t.Helper()
	for _, c := range cases {
		if c.name == name {
			return c
		}
	}
	t.Fatalf("no case %q", name)
	return reuseCase{}
}

// A Decision decided into again holds exactly what a fresh Decide returns,
// whatever it held before: nothing of an earlier decision (its reasons,
// trace steps, prompt, scopes, labels, flagged arguments, plugin asks)
// leaks into a later one, in either order of every pair of shapes. And a
// Clone taken before is untouched by the next decision into the same
// Decision.
func TestDecideIntoLeavesNothingOfTheLastDecision(t *testing.T) {
	t.Parallel()
	cases := reuseCases(t)
	ctx := context.Background()
	for _, first := range cases {
		for _, next := range cases {
			var d policy.Decision
			first.rules.DecideInto(ctx, &first.in, &d)
			kept := d.Clone()
			wantFirst := first.rules.Decide(ctx, &first.in)
			if !reflect.DeepEqual(stripElapsed(kept), stripElapsed(wantFirst)) {
				t.Fatalf("%s: DecideInto into a zero Decision\n got %+v\nwant %+v", first.name, kept, wantFirst)
			}
			next.rules.DecideInto(ctx, &next.in, &d)
			want := next.rules.Decide(ctx, &next.in)
			if got := d.Clone(); !reflect.DeepEqual(stripElapsed(got), stripElapsed(want)) {
				t.Errorf("%s after %s:\n got %+v\nwant %+v", next.name, first.name, got, want)
			}
			if !reflect.DeepEqual(stripElapsed(kept), stripElapsed(wantFirst)) {
				t.Errorf("%s after %s: the clone of the first decision changed:\n got %+v\nwant %+v", next.name, first.name, kept, wantFirst)
			}
		}
	}
}

// A Decision that once needed more room (more plugins' steps, a longer
// prompt) keeps it: deciding into it again allocates nothing, whichever
// shape the decisions take in turn. (A plugin verdict that names
// arguments allocates their pointers, and a test plugin its trace detail;
// the host's plugins give theirs rendered once, and the host's own test
// checks a decision with them allocates nothing.) A Decision from Decide,
// passed to DecideInto, gets memory of its own and leaves the old to its
// copies.
func TestDecideIntoAllocatesNothingOnceItsMemoryFits(t *testing.T) {
	cases := reuseCases(t)
	ctx := context.Background()
	var d policy.Decision
	for i := range cases {
		cases[i].rules.DecideInto(ctx, &cases[i].in, &d)
	}
	for _, c := range cases {
		// Invalid arguments are denied with their parser's error, made
		// for them.
		if len(c.in.Plugins) == 0 && c.name != "invalid arguments" {
			if n := testing.AllocsPerRun(20, func() { c.rules.DecideInto(ctx, &c.in, &d) }); n != 0 {
				t.Errorf("%s: %v allocations per decision into a reused Decision, want 0", c.name, n)
			}
		}
	}

	c := cases[0]
	fresh := c.rules.Decide(ctx, &c.in)
	copied := fresh
	allow := caseNamed(t, cases, "an allow without plugins")
	allow.rules.DecideInto(ctx, &allow.in, &fresh)
	if copied.Prompt == nil || copied.Prompt.Title != "Allow write_file on fs?" || copied.Reasons[0].Code != "auto_destructive" && len(copied.Reasons) != 1 {
		t.Errorf("DecideInto wrote into the memory of a Decision Decide returned: %+v", copied)
	}
}

// A copy of a Decision carries its memory along but never decides into
// it: deciding into the copy leaves the original as it was, and copies
// handed to several goroutines decide at once without writing one memory
// (run with -race, a shared memory is a reported race).
func TestACopiedDecisionDecidesIntoMemoryOfItsOwn(t *testing.T) {
	t.Parallel()
	cases := reuseCases(t)
	ctx := context.Background()
	ask, allow := caseNamed(t, cases, "an ask longer than the room for its text"), caseNamed(t, cases, "an allow that adds labels")
	var d policy.Decision
	ask.rules.DecideInto(ctx, &ask.in, &d)
	want := stripElapsed(d.Clone())

	c := d
	allow.rules.DecideInto(ctx, &allow.in, &c)
	if got := stripElapsed(d.Clone()); !reflect.DeepEqual(got, want) {
		t.Fatalf("deciding into a copy changed the original:\n got %+v\nwant %+v", got, want)
	}
	if c.Decision != policy.Allow || c.Prompt != nil {
		t.Fatalf("the copy: %s %+v", c.Decision, c.Prompt)
	}

	var wg sync.WaitGroup
	for g := range 4 {
		c := d
		wg.Go(func() {
			for i := range 200 {
				k := cases[(g+i)%len(cases)]
				k.rules.DecideInto(ctx, &k.in, &c)
				if c.Decision == policy.Ask && (c.Prompt == nil || !strings.HasPrefix(c.Prompt.Title, "Allow ")) {
					t.Errorf("goroutine %d, %s: prompt %+v", g, k.name, c.Prompt)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := stripElapsed(d.Clone()); !reflect.DeepEqual(got, want) {
		t.Fatalf("goroutines deciding into copies changed the original:\n got %+v\nwant %+v", got, want)
	}
}
