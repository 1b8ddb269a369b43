package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// noopWasm is a check plugin with no opinion: a call it decides is
// allowed or asked by the baseline, never denied, unless the plugin
// failed (a closed plugin fails, and on_error denies).
var noopWasm = testkit.Path("internal", "plugin", "testdata", "wat", "noop.wasm")

func noopPolicy() string {
	return "[policies.noop]\nwasm = " + strconvQuote(noopWasm) + "\n"
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestReloadKeepsSessionsApprovalsPinsAndLabels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "approvals.json")
	h := testhost.New(t, "", host.Defaults().WithApprovalsFile(file).WithPluginCacheDir(pluginCache))
	write := tool(t, writeFile)
	del := tool(t, `{"name":"delete_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`)

	d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: write})
	if err := h.Approve("s", &d, host.ForSession); err != nil {
		t.Fatal(err)
	}
	d = h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: del})
	if err := h.Approve("s", &d, host.Always); err != nil {
		t.Fatal(err)
	}
	h.Session("s").AddLabels("untrusted")

	// A config that changes something unrelated, with a plugin to load.
	if err := h.Reload(ctx, testhost.Config(t, "[apps.other]\nenabled = false\n"+noopPolicy())); err != nil {
		t.Fatal(err)
	}
	if d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: write}); d.Decision != host.Allow || d.Reasons[0].Code != policy.CodeRemembered {
		t.Errorf("session approval after reload: %s %+v", d.Decision, d.Reasons)
	}
	if d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: del}); d.Decision != host.Allow || d.Reasons[0].Code != policy.CodeRemembered {
		t.Errorf("always approval after reload: %s %+v", d.Decision, d.Reasons)
	}
	if got := h.Session("s").Labels(); len(got) != 1 || got[0] != "untrusted" {
		t.Errorf("labels after reload: %v", got)
	}
	// The pin survived: a changed definition is drift, and the session's
	// approval of the old one does not carry over.
	changed := tool(t, strings.Replace(writeFile, "Write a file", "Write a file, now better", 1))
	if d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: changed}); d.Decision != host.Ask || !strings.Contains(d.Trace[0].Detail, "drifted") {
		t.Errorf("changed definition after reload: %s %+v (want an ask for drift)", d.Decision, d.Trace[0])
	}
	if n := len(h.Config().Policies); n != 1 {
		t.Errorf("Config after reload has %d policies, want the new config's 1", n)
	}
}

func TestReloadAppliesAStricterConfigToTheNextCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := testhost.New(t, "", host.Defaults())
	read, write := tool(t, readFile), tool(t, writeFile)
	call := host.Call{Session: "s", Server: "fs", Tool: read}
	if d := h.Check(ctx, call); d.Decision != host.Allow {
		t.Fatalf("before: %s", d.Decision)
	}
	if got := h.Filter(ctx, "s", "fs", []*host.Tool{read, write}); len(got) != 2 {
		t.Fatalf("before: %d tools listed", len(got))
	}
	err := h.Reload(ctx, testhost.Config(t, `
[apps.fs.tools.read_file]
enabled = false
[apps.fs.tools.write_file]
approval_mode = "approve"
`))
	if err != nil {
		t.Fatal(err)
	}
	if d := h.Check(ctx, call); d.Decision != host.Deny || !d.Hidden {
		t.Errorf("hidden tool after reload: %s hidden=%v", d.Decision, d.Hidden)
	}
	if got := h.Filter(ctx, "s", "fs", []*host.Tool{read, write}); len(got) != 1 || got[0] != write {
		t.Errorf("after reload: listed %d tools, want write_file only", len(got))
	}
	if d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: write}); d.Decision != host.Allow || d.Reasons[0].Code != policy.CodeModeApprove {
		t.Errorf("write_file after reload: %s %+v", d.Decision, d.Reasons)
	}
}

func TestReloadRefusesABrokenChangeAndTheOldPolicyKeepsDeciding(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.wasm")
	if err := os.WriteFile(garbage, []byte("not WebAssembly"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, toml, want string
	}{
		{"a plugin whose file is missing is refused", "[policies.gone]\nwasm = " + strconvQuote(filepath.Join(dir, "missing.wasm")) + "\n", "policies.gone"},
		{"a plugin whose file is not WebAssembly is refused", "[policies.bad]\nwasm = " + strconvQuote(garbage) + "\n", "policies.bad"},
		{"an unknown built-in plugin is refused", "[policies.typo]\nbuiltin = \"argguardd\"\n", "argguardd"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var log testkit.Buffer
			h := testhost.New(t, "[apps.fs.tools.read_file]\nenabled = false\n", host.Defaults().WithAuditLog(&log).WithPluginCacheDir(pluginCache))
			before := h.Config()
			err := h.Reload(ctx, testhost.Config(t, tc.toml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Reload = %v, want an error naming %q", err, tc.want)
			}
			if h.Config() != before {
				t.Error("Config changed after a refused reload")
			}
			if d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: tool(t, readFile)}); d.Decision != host.Deny {
				t.Errorf("the old policy hid read_file; after a refused reload it is %s", d.Decision)
			}
			if d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile)}); d.Decision != host.Ask {
				t.Errorf("write_file after a refused reload: %s (the refused plugin must not decide)", d.Decision)
			}
			if !auditHas(t, log.String(), "reload", `"outcome":"refused"`) {
				t.Errorf("no refused reload in the audit log:\n%s", log.String())
			}
		})
	}
}

func TestReloadRecordsAnAppliedChangeInTheAuditLog(t *testing.T) {
	t.Parallel()
	var log testkit.Buffer
	h := testhost.New(t, "", host.Defaults().WithAuditLog(&log))
	if err := h.Reload(context.Background(), testhost.Config(t, "")); err != nil {
		t.Fatal(err)
	}
	if !auditHas(t, log.String(), "reload", `"outcome":"applied"`, `"files":["config.toml"]`) {
		t.Errorf("no applied reload in the audit log:\n%s", log.String())
	}
}

func auditHas(t *testing.T, log, event string, parts ...string) bool {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `"event":"`+event+`"`) {
			continue
		}
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}

// Under -race: calls decide while the policy changes under them, and
// every decision is one policy's whole answer, never a closed plugin's.
func TestCallsDuringReloadDecideByOnePolicyAndNeverUseAClosedPlugin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := host.Defaults().WithPluginCacheDir(pluginCache)
	configs := []*config.Config{
		testhost.Config(t, noopPolicy()+"[apps.fs.tools.write_file]\napproval_mode = \"approve\"\n"),
		testhost.Config(t, noopPolicy()+"[apps.fs.tools.write_file]\napproval_mode = \"prompt\"\n"),
	}
	h, err := host.New(ctx, configs[0], s)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	write := tool(t, writeFile)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c := host.Call{Session: "s", Server: "fs", Tool: write, Arguments: json.RawMessage(`{}`)}
				d := h.Check(ctx, c)
				switch {
				case d.Decision == host.Allow && d.Reasons[0].Code == policy.CodeModeApprove:
				case d.Decision == host.Ask && d.Reasons[0].Code == policy.CodeModePrompt:
				default:
					t.Errorf("goroutine %d: %s %+v", i, d.Decision, d.Reasons)
					return
				}
				h.Filter(ctx, "s", "fs", []*host.Tool{write})
				h.Observe(ctx, c, &d, host.Result{Text: "ok"})
			}
		})
	}
	for i := range 20 {
		if err := h.Reload(ctx, configs[(i+1)%2]); err != nil {
			t.Error(err)
			break
		}
	}
	close(stop)
	wg.Wait()
}

// gate is a Go list plugin that holds the first list event until it is
// let go, so that a call is in flight while the policy changes.
type gate struct {
	entered, leave chan struct{}
	once           sync.Once
}

func (g *gate) Name() string { return "gate" }
func (g *gate) List(ctx context.Context, in *policy.ListInput) ([]string, error) {
	g.once.Do(func() {
		close(g.entered)
		<-g.leave
	})
	return nil, nil
}

func TestOldPluginsCloseOnlyAfterTheCallsUsingThemEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := &gate{entered: make(chan struct{}), leave: make(chan struct{})}
	h := testhost.New(t, noopPolicy(), host.Defaults().WithPluginCacheDir(pluginCache).WithPlugin(g))
	oldClosed := host.PolicyClosed(h)

	// The call runs the list event (held by the gate) and then the noop
	// plugin's check, which a closed plugin would fail.
	result := make(chan host.Decision)
	go func() {
		result <- h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: tool(t, readFile), Arguments: json.RawMessage(`{}`)})
	}()
	<-g.entered
	if err := h.Reload(ctx, testhost.Config(t, noopPolicy())); err != nil {
		t.Fatal(err)
	}
	select {
	case <-oldClosed:
		t.Fatal("the old plugins were closed while a call was using them")
	default:
	}
	close(g.leave)
	d := <-result
	if d.Decision != host.Allow {
		t.Errorf("the in-flight call: %s %+v (its plugin must still be open)", d.Decision, d.Reasons)
	}
	<-oldClosed // and once it ended, they are closed
}

func TestACallAfterCloseFailsClosedAndDoesNotHang(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, err := host.New(ctx, testhost.Config(t, noopPolicy()), host.Defaults().WithPluginCacheDir(pluginCache))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(ctx); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: tool(t, readFile), Arguments: json.RawMessage(`{}`)}); d.Decision != host.Deny {
		t.Errorf("a call after Close: %s (its plugin is closed: on_error denies)", d.Decision)
	}
	if err := h.Reload(ctx, config.Default()); err == nil {
		t.Error("Reload after Close succeeded")
	}
}
