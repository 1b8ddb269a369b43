package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

const readFile = `{"name":"read_file","description":"Read a file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}`

// hidelistWasm hides the tools named in its config's "hide" (list event only).
var hidelistWasm = testkit.Path("internal", "plugin", "testdata", "wat", "hidelist.wasm")

// hider is a Go list plugin: it hides the tools in hide, and, once the
// session carries label, the tools in hideWhen. It records every list input.
type hider struct {
	name     string
	hide     []string
	label    string
	hideWhen []string
	err      error
	onError  policy.Verdict

	mu   sync.Mutex
	seen []policy.ListInput
}

func (p *hider) Name() string { return p.name }
func (p *hider) List(ctx context.Context, in *policy.ListInput) ([]string, error) {
	p.mu.Lock()
	p.seen = append(p.seen, policy.ListInput{Labels: in.Labels, Tools: slices.Clone(in.Tools), Hints: slices.Clone(in.Hints)})
	p.mu.Unlock()
	if p.err != nil {
		return nil, p.err
	}
	out := slices.Clone(p.hide)
	if p.label != "" && slices.Contains(in.Labels, p.label) {
		out = append(out, p.hideWhen...)
	}
	return out, nil
}

func (p *hider) runs() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.seen)
}

// failingHider is a hider with an on_error verdict, as wasm plugins have.
type failingHider struct{ *hider }

func (p failingHider) OnError() policy.Verdict { return p.onError }

// labelOn is a check plugin that adds a label to the session on every call
// to tool.
type labelOn struct{ tool, label string }

func (labelOn) Name() string                  { return "labelon" }
func (labelOn) Matches(app, tool string) bool { return true }
func (labelOn) CanApprove() bool              { return false }
func (l labelOn) Check(_ context.Context, in *policy.CheckInput) policy.PluginVerdict {
	if in.Tool.Name == l.tool {
		return policy.PluginVerdict{Verdict: policy.Abstain, Labels: []string{l.label}}
	}
	return policy.PluginVerdict{Verdict: policy.Abstain}
}

// approveAll allows every call of server fs that nothing else objects to.
const approveAll = "[mcp_servers.fs]\ncommand = \"server\"\ndefault_tools_approval_mode = \"approve\"\n"

func listed(h *host.Host, session string, tools ...*host.Tool) []string {
	var names []string
	for _, t := range h.Filter(context.Background(), session, "fs", tools) {
		names = append(names, t.Name)
	}
	return names
}

func check(h *host.Host, session string, t *host.Tool) host.Decision {
	return h.Check(context.Background(), host.Call{Session: session, Server: "fs", Tool: t, Arguments: json.RawMessage(`{"path":"/tmp/x"}`)})
}

// wantHidden fails unless d is a deny for a hidden tool with code, from a
// reason source starting with source.
func wantHidden(t *testing.T, d host.Decision, code, source string) {
	t.Helper()
	if d.Decision != host.Deny || !d.Hidden || d.Prompt != nil || len(d.Reasons) != 1 ||
		d.Reasons[0].Code != code || !strings.HasPrefix(d.Reasons[0].Source, source) {
		t.Fatalf("want a hidden deny %s from %s, got %s hidden=%v reasons=%+v", code, source, d.Decision, d.Hidden, d.Reasons)
	}
	for _, st := range d.Trace {
		if st.Step == policy.StepVisibility && st.Outcome != "hidden" {
			t.Fatalf("trace says visibility=%s for a hidden tool: %+v", st.Outcome, d.Trace)
		}
	}
}

// Every source that hides a tool from tools/list also denies a call to it,
// without a prompt, with a code that names the source; and the tool Filter
// keeps is not denied as hidden. Each case calls the tool with and without
// a list first: a call needs no list to be refused.
func TestEveryHideIsADeny(t *testing.T) {
	t.Parallel()
	const fs = "[mcp_servers.fs]\ncommand = \"server\"\n"
	const hidelist = "[policies.hider]\nwasm = %q\nconfig = { hide = [\"write_file\"] }\n"
	cases := []struct {
		name         string
		toml         string
		settings     host.Settings
		code, source string
		all          bool // the source hides read_file too
	}{
		{"a disabled app hides its tools", "[apps.fs]\nenabled = false\n", host.Defaults(), policy.CodeBlockedByAppConfig, "visibility", true},
		{"a disabled server hides its tools", fs + "enabled = false\n", host.Defaults(), policy.CodeBlockedByAppConfig, "visibility", true},
		{"enabled_tools hides the tools it does not name", fs + "enabled_tools = [\"read_file\"]\n", host.Defaults(), policy.CodeBlockedByAppConfig, "visibility", false},
		{"disabled_tools hides the tools it names", fs + "disabled_tools = [\"write_file\"]\n", host.Defaults(), policy.CodeBlockedByAppConfig, "visibility", false},
		{"a tool with enabled = false is hidden", "[apps.fs.tools.write_file]\nenabled = false\n", host.Defaults(), policy.CodeBlockedByAppConfig, "visibility", false},
		{"default_tools_enabled = false hides a tool not enabled by name", "[apps.fs]\ndefault_tools_enabled = false\n[apps.fs.tools.read_file]\nenabled = true\n", host.Defaults(), policy.CodeBlockedByAppConfig, "visibility", false},
		{"destructive_enabled = false hides a destructive tool", "[apps.fs]\ndestructive_enabled = false\n", host.Defaults(), policy.CodeBlockedByAppConfig, "visibility", false},
		{"read_only hides a tool that writes", "[apps.fs]\nread_only = true\n", host.Defaults(), policy.CodeBlockedByAppConfig, "visibility", false},
		{"a wasm plugin's list event hides a tool", fmt.Sprintf(hidelist, hidelistWasm), host.Defaults(), policy.CodeHiddenByPlugin, "plugin:hider", false},
		{"a Go plugin's list event hides a tool", "", host.Defaults().WithPlugin(&hider{name: "gohider", hide: []string{"write_file"}}), policy.CodeHiddenByPlugin, "plugin:gohider", false},
		{"a list plugin that fails hides what it could hide (on_error deny)", "", host.Defaults().WithPlugin(failingHider{&hider{name: "broken", err: errors.New("trap"), onError: policy.Deny}}), policy.CodePluginError, "plugin:broken", true},
		{"a Go list plugin that fails and has no on_error fails closed", "", host.Defaults().WithPlugin(&hider{name: "broken", err: errors.New("trap")}), policy.CodePluginError, "plugin:broken", true},
		{"a wasm plugin that failed to load hides what it could hide", "[policies.missing]\nwasm = \"/nonexistent/missing.wasm\"\ntools = [\"write_*\"]\n", host.Defaults(), policy.CodePluginError, "plugin:missing", false},
		{"the gate's reason wins over a plugin's", "[apps.fs]\ndestructive_enabled = false\n", host.Defaults().WithPlugin(&hider{name: "gohider", hide: []string{"write_file"}}), policy.CodeBlockedByAppConfig, "visibility", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := testhost.New(t, tc.toml, tc.settings)
			w, r := tool(t, writeFile), tool(t, readFile)
			// Called before any list: the call itself runs the list.
			wantHidden(t, check(h, "unlisted", w), tc.code, tc.source)
			// Listed first, then called.
			want := []string{"read_file"}
			if tc.all {
				want = nil
			}
			if got := listed(h, "listed", w, r); !slices.Equal(got, want) {
				t.Fatalf("tools/list: %v, want %v", got, want)
			}
			wantHidden(t, check(h, "listed", w), tc.code, tc.source)
			wantHidden(t, check(h, "listed", w), tc.code, tc.source) // and again, from what the list left
			if d := check(h, "listed", r); !tc.all && (d.Hidden || d.Decision == host.Deny) {
				t.Fatalf("the listed tool is denied: %s %+v", d.Decision, d.Reasons)
			} else if tc.all && !d.Hidden {
				t.Fatalf("a tool left out of the list is not denied as hidden: %s %+v", d.Decision, d.Reasons)
			}
		})
	}
}

// A plugin that hides by labels hides at the next call once the session
// gains the label, even though the list the session last saw (before the
// label) showed the tool.
func TestListHideThatDependsOnLabelsAppliesAtTheNextCall(t *testing.T) {
	t.Parallel()
	p := &hider{name: "taint", label: "tainted", hideWhen: []string{"write_file"}}
	h := testhost.New(t, approveAll, host.Defaults().WithPlugin(p).WithPlugin(labelOn{tool: "read_file", label: "tainted"}))
	w, r := tool(t, writeFile), tool(t, readFile)
	if got := listed(h, "s", w, r); !slices.Equal(got, []string{"write_file", "read_file"}) {
		t.Fatalf("tools/list before the label: %v", got)
	}
	if d := check(h, "s", w); d.Decision != host.Allow {
		t.Fatalf("write before the label: %s %+v", d.Decision, d.Reasons)
	}
	if d := check(h, "s", r); d.Decision != host.Allow {
		t.Fatalf("read: %s %+v", d.Decision, d.Reasons)
	}
	// The session is now tainted; the client has not listed again.
	wantHidden(t, check(h, "s", w), policy.CodeHiddenByPlugin, "plugin:taint")
	if got := listed(h, "s", w, r); !slices.Equal(got, []string{"read_file"}) {
		t.Fatalf("tools/list after the label: %v", got)
	}
	// Another session has no label and still sees and calls the tool.
	if d := check(h, "other", w); d.Decision != host.Allow {
		t.Fatalf("other session: %s %+v", d.Decision, d.Reasons)
	}
}

// A call reuses the list the session last saw while nothing the plugins saw
// has changed, and runs the list event again when the called tool's
// definition changed.
func TestCallReusesTheLastListUntilTheToolChanges(t *testing.T) {
	t.Parallel()
	p := &hider{name: "h", hide: []string{"delete_file"}}
	h := testhost.New(t, "", host.Defaults().WithPlugin(p))
	w := tool(t, writeFile)
	listed(h, "s", w)
	for i := 0; i < 3; i++ {
		check(h, "s", w)
	}
	if n := p.runs(); n != 1 {
		t.Fatalf("list ran %d times for one list and three unchanged calls, want 1", n)
	}
	changed := tool(t, strings.Replace(writeFile, "Write a file", "Write a file (new)", 1))
	check(h, "s", changed)
	if n := p.runs(); n != 2 {
		t.Fatalf("list ran %d times after the definition changed, want 2", n)
	}
	// A session that ends takes its lists along: a new one runs list again.
	h.EndSession("s")
	check(h, "s", w)
	if n := p.runs(); n != 3 {
		t.Fatalf("list ran %d times after the session ended, want 3", n)
	}
}

// The list event shows each tool's effective hints (config overrides,
// trust) next to the declared ones: the same hints a check decides by.
func TestListSeesEffectiveHints(t *testing.T) {
	t.Parallel()
	p := &hider{name: "h"}
	h := testhost.New(t, "[apps.fs]\ntrust = \"none\"\n[apps.fs.tools.read_file]\nhints = { reads_private_data = true }\n", host.Defaults().WithPlugin(p))
	r := tool(t, readFile)
	listed(h, "s", r)
	d := check(h, "s", r)
	if len(p.seen) != 1 || len(p.seen[0].Hints) != 1 {
		t.Fatalf("list inputs: %+v", p.seen)
	}
	got := p.seen[0].Hints[0]
	if got != d.Hints {
		t.Fatalf("list saw hints %v, check decided by %v", got, d.Hints)
	}
	if got.Get(hints.ReadOnly) == hints.True || got.Get(hints.ReadsPrivateData) != hints.True {
		t.Fatalf("effective hints %v: want readOnlyHint distrusted and reads_private_data set", got)
	}
	if p.seen[0].Tools[0].Declared.Get(hints.ReadOnly) != hints.True {
		t.Fatalf("declared hints lost: %v", p.seen[0].Tools[0].Declared)
	}
}

// A list plugin that fails with on_error = "ask" leaves the tool listed
// and asks before a call, never remembering; with "abstain" the call is
// decided as if the plugin were absent.
func TestFailingListPluginFollowsOnError(t *testing.T) {
	t.Parallel()
	ask := failingHider{&hider{name: "flaky", err: errors.New("timeout"), onError: policy.Ask}}
	h := testhost.New(t, approveAll, host.Defaults().WithPlugin(ask))
	w := tool(t, writeFile)
	if got := listed(h, "s", w); !slices.Equal(got, []string{"write_file"}) {
		t.Fatalf("on_error ask: tools/list %v", got)
	}
	d := check(h, "s", w)
	if d.Decision != host.Ask || d.Rememberable || d.Hidden || !hasCode(&d, policy.CodePluginError) {
		t.Fatalf("on_error ask: %s rememberable=%v %+v", d.Decision, d.Rememberable, d.Reasons)
	}

	abstain := failingHider{&hider{name: "flaky", err: errors.New("timeout"), onError: policy.Abstain}}
	h = testhost.New(t, approveAll, host.Defaults().WithPlugin(abstain))
	if got := listed(h, "s", w); !slices.Equal(got, []string{"write_file"}) {
		t.Fatalf("on_error abstain: tools/list %v", got)
	}
	if d := check(h, "s", w); d.Decision != host.Allow {
		t.Fatalf("on_error abstain: %s %+v", d.Decision, d.Reasons)
	}
}

// A plugin limited by tools globs hides only what they match, at list time
// and at call time alike.
func TestListPluginHidesOnlyWithinItsToolsGlobs(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, fmt.Sprintf("[policies.hider]\nwasm = %q\ntools = [\"read_*\"]\nconfig = { hide = [\"write_file\", \"read_file\"] }\n", hidelistWasm), host.Defaults())
	w, r := tool(t, writeFile), tool(t, readFile)
	if got := listed(h, "s", w, r); !slices.Equal(got, []string{"write_file"}) {
		t.Fatalf("tools/list: %v", got)
	}
	if d := check(h, "s", w); d.Hidden {
		t.Fatalf("write_file is outside the plugin's globs but denied: %+v", d.Reasons)
	}
	wantHidden(t, check(h, "s", r), policy.CodeHiddenByPlugin, "plugin:hider")
}
