package policy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
)

func TestScopeMatchesOnlyCallsInside(t *testing.T) {
	t.Parallel()
	cx := &policy.ServerContext{Cwd: "/repo", Home: "/home/u", Roots: []string{"/repo"}}
	docs := policy.Scope{Arg: "/path", Glob: "/repo/docs/**"}
	push := policy.Scope{Arg: "/command", Regex: "^git push origin feature/"}
	nested := policy.Scope{Arg: "/opts/paths/1", Glob: "/repo/docs/*.md"}
	cases := []struct {
		name  string
		scope policy.Scope
		args  string
		cx    *policy.ServerContext
		want  bool
	}{
		{"an absolute path under the glob is inside", docs, `{"path":"/repo/docs/a/b.md"}`, cx, true},
		{"the directory itself is inside a trailing /**", docs, `{"path":"/repo/docs"}`, cx, true},
		{"a sibling directory is outside", docs, `{"path":"/repo/docsx/a.md"}`, cx, false},
		{"dot-dot out of the directory is outside", docs, `{"path":"/repo/docs/../secrets/k"}`, cx, false},
		{"a relative path resolved into the directory is inside", docs, `{"path":"docs/a.md"}`, cx, true},
		{"a relative path is outside when the working directory is unknown", docs, `{"path":"docs/a.md"}`, nil, false},
		{"a relative path that one base resolves outside is outside", docs, `{"path":"docs/a.md"}`, &policy.ServerContext{Cwd: "/repo", Roots: []string{"/other"}}, false},
		{"a home path is resolved against the server's home", policy.Scope{Arg: "/path", Glob: "/home/u/notes/**"}, `{"path":"~/notes/x"}`, cx, true},
		{"a number is outside", docs, `{"path":3}`, cx, false},
		{"a missing argument is outside", docs, `{"other":"/repo/docs/a"}`, cx, false},
		{"an array is outside even when its elements are inside", docs, `{"path":["/repo/docs/a"]}`, cx, false},
		{"a regex matches as written", push, `{"command":"git push origin feature/x"}`, cx, true},
		{"an anchored regex does not match later in the value", push, `{"command":"echo; git push origin feature/x"}`, cx, false},
		{"a pointer reaches into objects and arrays", nested, `{"opts":{"paths":["/etc/x","/repo/docs/a.md"]}}`, cx, true},
		{"a pointer index that is not canonical reaches nothing", policy.Scope{Arg: "/p/01", Glob: "/**"}, `{"p":["a","/b"]}`, cx, false},
		{"an invalid scope matches nothing", policy.Scope{Arg: "path", Glob: "/**"}, `{"path":"/a"}`, cx, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.scope.Match(json.RawMessage(tc.args), tc.cx); got != tc.want {
				t.Errorf("Match(%s) = %v, want %v", tc.args, got, tc.want)
			}
		})
	}
}

func TestCheckScopeRefusesWhatCannotBeMatchedSafely(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		scope policy.Scope
		want  string
	}{
		{"a top-level name instead of a pointer", policy.Scope{Arg: "path", Glob: "/a/**"}, "JSON pointer"},
		{"a malformed pointer", policy.Scope{Arg: "/a~2", Glob: "/a/**"}, "~"},
		{"both glob and regex", policy.Scope{Arg: "/p", Glob: "/a", Regex: "a"}, "exactly one"},
		{"neither glob nor regex", policy.Scope{Arg: "/p"}, "needs"},
		{"a relative glob", policy.Scope{Arg: "/p", Glob: "docs/**"}, "absolute"},
		{"a regex that does not compile", policy.Scope{Arg: "/p", Regex: "(a"}, "missing closing"},
		{"a control character", policy.Scope{Arg: "/p", Glob: "/a\n/**"}, "control character"},
		{"a pattern too long", policy.Scope{Arg: "/p", Glob: "/" + strings.Repeat("a", 300)}, "longer than"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := policy.CheckScope(tc.scope)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckScope(%+v) = %v, want an error about %q", tc.scope, err, tc.want)
			}
		})
	}
	if err := policy.CheckScope(policy.Scope{Arg: "/path", Glob: "/repo/docs/**"}); err != nil {
		t.Errorf("a good scope is refused: %v", err)
	}
}

// grants is a session's scoped approvals as the pipeline reads them:
// scopes whose Plugin starts with "+" were granted by the same answer as
// the scope before them, the others each by an answer of their own.
type grants []policy.ProposedScope

func (grants) Remembered(app, server, connector, tool, hash string) bool { return false }
func (g grants) EachScope(app, server, connector, tool, hash string, f func(grant uint64, plugin, code string, s policy.Scope) bool) {
	var grant uint64
	for _, s := range g {
		plugin, same := strings.CutPrefix(s.Plugin, "+")
		if !same {
			grant++
		}
		if !f(grant, plugin, s.Code, s.Scope) {
			return
		}
	}
}

func askScoped(name string, scopes ...policy.Scope) flagger {
	v := policy.PluginVerdict{Verdict: policy.Ask, Code: "arg_needs_approval", Reason: "path is guarded", Scopes: scopes}
	for _, s := range scopes {
		v.Arguments = append(v.Arguments, s.Arg)
	}
	return flagger{name, v}
}

func decideScoped(t *testing.T, mode, args string, approvals policy.Approvals, plugins ...policy.Checker) policy.Decision {
	t.Helper()
	cfg, err := config.LoadBytes("t.toml", []byte("[apps.fs]\ndestructive_enabled = true\n"+mode))
	if err != nil {
		t.Fatal(err)
	}
	rules, err := policy.Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tool, err := hints.ParseTool([]byte(`{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	return rules.Decide(context.Background(), &policy.Input{Session: "s", Server: "fs", Tool: tool, Arguments: json.RawMessage(args),
		Plugins: plugins, Approvals: approvals, Context: &policy.ServerContext{Cwd: "/repo"}})
}

func TestScopedOptionIsOfferedOnlyWhenScopesCoverEveryUnrememberedAsk(t *testing.T) {
	t.Parallel()
	dir := policy.Scope{Arg: "/path", Glob: "/repo/docs/**"}
	args := `{"path":"/repo/docs/a.md","content":"x"}`
	cases := []struct {
		name    string
		mode    string
		plugins []policy.Checker
		offered bool
	}{
		{"one plugin asking with a scope for its argument", "", []policy.Checker{askScoped("argguard", dir)}, true},
		{"a plugin asking without a scope", "", []policy.Checker{askFlagging("argguard", false, "path")}, false},
		{"a scoped ask and another plugin's unscoped ask", "", []policy.Checker{askScoped("argguard", dir), askFlagging("other", false, "content")}, false},
		{"a scoped ask next to a rememberable ask", "", []policy.Checker{askScoped("argguard", dir), askFlagging("other", true, "content")}, true},
		{"a scope that does not cover every argument the ask names", "", []policy.Checker{flagger{"argguard", policy.PluginVerdict{Verdict: policy.Ask, Code: "c", Arguments: []string{"path", "content"}, Scopes: []policy.Scope{dir}}}}, false},
		{"a scoped ask under approval mode prompt", "[apps.fs.tools.write_file]\napproval_mode = \"prompt\"\n", []policy.Checker{askScoped("argguard", dir)}, false},
		{"a failed plugin's ask", "", []policy.Checker{flagger{"argguard", policy.PluginVerdict{Verdict: policy.Ask, Arguments: []string{"path"}, Scopes: []policy.Scope{dir}, Err: context.DeadlineExceeded}}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := decideScoped(t, tc.mode, args, nil, tc.plugins...)
			if d.Decision != policy.Ask || d.Prompt == nil {
				t.Fatalf("decision %v, want an ask", d.Decision)
			}
			got := false
			for _, o := range d.Prompt.Options {
				got = got || o == policy.OptionAllowSessionScoped
				if o == policy.OptionAllowSession || o == policy.OptionAlways {
					t.Errorf("an unrememberable ask offers %s", o)
				}
			}
			if got != tc.offered {
				t.Fatalf("options %v: scoped offered = %v, want %v", d.Prompt.Options, got, tc.offered)
			}
			if tc.offered && (len(d.Scopes) != 1 || d.Scopes[0].Scope != dir || d.Scopes[0].Plugin != "argguard" || d.Prompt.Scope != "path under /repo/docs/**") {
				t.Errorf("scopes %+v, prompt scope %q", d.Scopes, d.Prompt.Scope)
			}
			if !tc.offered && len(d.Scopes) != 0 {
				t.Errorf("scopes %+v set without the option", d.Scopes)
			}
		})
	}
}

func TestScopedApprovalLiftsOnlyTheAsksItCovers(t *testing.T) {
	t.Parallel()
	dir := policy.Scope{Arg: "/path", Glob: "/repo/docs/**"}
	held := grants{{Plugin: "argguard", Code: "arg_needs_approval", Scope: dir}}
	inside := `{"path":"/repo/docs/b.md","content":"x"}`
	cases := []struct {
		name     string
		mode     string
		args     string
		held     grants
		plugins  []policy.Checker
		decision policy.Verdict
	}{
		{"a call inside the scope runs, the baseline's auto ask with it", "", inside, held, []policy.Checker{askScoped("argguard", policy.Scope{Arg: "/path", Glob: "/repo/docs/b.md"})}, policy.Allow},
		{"a relative path resolved inside runs", "", `{"path":"docs/c.md"}`, held, []policy.Checker{askScoped("argguard", dir)}, policy.Allow},
		{"a call outside the scope is asked again", "", `{"path":"/repo/src/a.go"}`, held, []policy.Checker{askScoped("argguard", policy.Scope{Arg: "/path", Glob: "/repo/src/**"})}, policy.Ask},
		{"dot-dot out of the scope is asked again", "", `{"path":"/repo/docs/../.git/config"}`, held, []policy.Checker{askScoped("argguard", dir)}, policy.Ask},
		{"another plugin's scope does not lift this plugin's ask", "", inside, grants{{Plugin: "other", Code: "arg_needs_approval", Scope: dir}}, []policy.Checker{askScoped("argguard", dir)}, policy.Ask},
		{"a scope granted for another reason code does not lift", "", inside, grants{{Plugin: "argguard", Code: "secret", Scope: dir}}, []policy.Checker{askScoped("argguard", dir)}, policy.Ask},
		{"an ask about another argument is not lifted", "", inside, held, []policy.Checker{flagger{"argguard", policy.PluginVerdict{Verdict: policy.Ask, Code: "arg_needs_approval", Arguments: []string{"content"}, Scopes: []policy.Scope{{Arg: "/content", Regex: "x"}}}}}, policy.Ask},
		{"an ask that proposes no scope now is not lifted", "", inside, held, []policy.Checker{askFlagging("argguard", false, "path")}, policy.Ask},
		{"another plugin's unscoped ask is not lifted", "", inside, held, []policy.Checker{askScoped("argguard", dir), askFlagging("other", false, "content")}, policy.Ask},
		{"a baseline prompt-mode ask is not lifted", "[apps.fs.tools.write_file]\napproval_mode = \"prompt\"\n", inside, held, []policy.Checker{askScoped("argguard", dir)}, policy.Ask},
		{"a deny is never lifted", "", inside, held, []policy.Checker{askScoped("argguard", dir), flagger{"deny", policy.PluginVerdict{Verdict: policy.Deny, Code: "no"}}}, policy.Deny},
		{"two asks covered by one answer's scopes are lifted", "", inside, grants{{Plugin: "argguard", Code: "arg_needs_approval", Scope: dir}, {Plugin: "+cmd", Code: "c", Scope: policy.Scope{Arg: "/content", Regex: "^x$"}}},
			[]policy.Checker{askScoped("argguard", dir), flagger{"cmd", policy.PluginVerdict{Verdict: policy.Ask, Code: "c", Arguments: []string{"content"}, Scopes: []policy.Scope{{Arg: "/content", Regex: "^x"}}}}}, policy.Allow},
		{"scopes of two separate answers do not combine", "", inside, grants{{Plugin: "argguard", Code: "arg_needs_approval", Scope: dir}, {Plugin: "cmd", Code: "c", Scope: policy.Scope{Arg: "/content", Regex: "^x$"}}},
			[]policy.Checker{askScoped("argguard", dir), flagger{"cmd", policy.PluginVerdict{Verdict: policy.Ask, Code: "c", Arguments: []string{"content"}, Scopes: []policy.Scope{{Arg: "/content", Regex: "^x"}}}}}, policy.Ask},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := decideScoped(t, tc.mode, tc.args, tc.held, tc.plugins...)
			if d.Decision != tc.decision {
				t.Fatalf("decision %v (%+v), want %v", d.Decision, d.Reasons, tc.decision)
			}
			if tc.decision != policy.Allow {
				return
			}
			if len(d.Reasons) != 1 || d.Reasons[0].Code != policy.CodeRememberedScope {
				t.Errorf("reasons %+v, want one %s", d.Reasons, policy.CodeRememberedScope)
			}
			said := false
			for _, st := range d.Trace {
				said = said || st.Step == policy.StepRemembered && strings.Contains(st.Detail, "argguard: path under /repo/docs/**")
			}
			if !said {
				t.Errorf("trace %+v does not say which scope lifted the ask", d.Trace)
			}
		})
	}
}

// ScopesText is what a request state binds: two lists that would remember
// different calls never spell the same, whichever field differs, and
// moving text from one field to the next is a difference too.
func TestScopesTextTellsApartEveryFieldOfEveryScope(t *testing.T) {
	t.Parallel()
	base := func() []policy.ProposedScope {
		return []policy.ProposedScope{
			{Plugin: "argguard", Code: "arg_needs_approval", Scope: policy.Scope{Arg: "/path", Glob: "/repo/docs/**"}},
			{Plugin: "shell", Code: "command", Scope: policy.Scope{Arg: "/command", Regex: "^git push"}},
		}
	}
	want := policy.ScopesText(base())
	if policy.ScopesText(nil) != "" || want == "" {
		t.Fatalf("ScopesText(nil) = %q, ScopesText(two) = %q", policy.ScopesText(nil), want)
	}
	changes := map[string]func(s []policy.ProposedScope) []policy.ProposedScope{
		"plugin":            func(s []policy.ProposedScope) []policy.ProposedScope { s[0].Plugin = "other"; return s },
		"code":              func(s []policy.ProposedScope) []policy.ProposedScope { s[1].Code = "other"; return s },
		"arg":               func(s []policy.ProposedScope) []policy.ProposedScope { s[0].Arg = "/file"; return s },
		"a wider glob":      func(s []policy.ProposedScope) []policy.ProposedScope { s[0].Glob = "/repo/**"; return s },
		"regex":             func(s []policy.ProposedScope) []policy.ProposedScope { s[1].Regex = "^git"; return s },
		"glob made a regex": func(s []policy.ProposedScope) []policy.ProposedScope { s[0].Regex, s[0].Glob = s[0].Glob, ""; return s },
		"text moved a field": func(s []policy.ProposedScope) []policy.ProposedScope {
			s[0].Plugin, s[0].Code = "argguardarg", "_needs_approval"
			return s
		},
		"one scope left out":  func(s []policy.ProposedScope) []policy.ProposedScope { return s[:1] },
		"the order swapped":   func(s []policy.ProposedScope) []policy.ProposedScope { s[0], s[1] = s[1], s[0]; return s },
		"a newline in a code": func(s []policy.ProposedScope) []policy.ProposedScope { s[0].Code = "arg\n\"/path\""; return s },
	}
	for name, change := range changes {
		if got := policy.ScopesText(change(base())); got == want {
			t.Errorf("%s: spelled the same as the original: %q", name, got)
		}
	}
}
