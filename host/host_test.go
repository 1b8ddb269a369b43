package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/testkit"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

func tool(t testing.TB, raw string) *host.Tool {
	t.Helper()
	tl, err := host.ParseTool([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

const writeFile = `{"name":"write_file","description":"Write a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},"annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":false}}`

func TestApproveForSessionAllowsTheNextCallWithoutAsking(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "", host.Defaults())
	ctx := context.Background()
	call := host.Call{Session: "s1", Server: "fs", Tool: tool(t, writeFile), Arguments: json.RawMessage(`{"path":"/tmp/x"}`)}
	d := h.Check(ctx, call)
	if d.Decision != host.Ask || !d.Rememberable {
		t.Fatalf("first call: %s rememberable=%v", d.Decision, d.Rememberable)
	}
	if err := h.Approve("s1", &d, host.ForSession); err != nil {
		t.Fatal(err)
	}
	if d2 := h.Check(ctx, call); d2.Decision != host.Allow || d2.Reasons[0].Code != policy.CodeRemembered {
		t.Fatalf("second call: %s %+v", d2.Decision, d2.Reasons)
	}
	// Another session remembers nothing.
	call.Session = "s2"
	if d3 := h.Check(ctx, call); d3.Decision != host.Ask {
		t.Fatalf("other session: %s", d3.Decision)
	}
}

func TestApproveOnceRemembersNothing(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "", host.Defaults())
	call := host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile)}
	d := h.Check(context.Background(), call)
	if err := h.Approve("s", &d, host.Once); err != nil {
		t.Fatal(err)
	}
	if d2 := h.Check(context.Background(), call); d2.Decision != host.Ask {
		t.Fatalf("after approve once: %s", d2.Decision)
	}
}

func TestApproveRefusesWhatCannotBeRemembered(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "[apps.fs]\ndefault_tools_approval_mode = \"prompt\"\n", host.Defaults())
	call := host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile)}
	d := h.Check(context.Background(), call)
	if err := h.Approve("s", &d, host.ForSession); !errors.Is(err, host.ErrNotRememberable) {
		t.Fatalf("approve prompt-mode ask for session: %v", err)
	}
	if err := h.Approve("s", &d, host.Once); err != nil {
		t.Fatalf("approve once: %v", err)
	}
	allow := h.Check(context.Background(), host.Call{Session: "s", Server: "fs", Tool: tool(t, `{"name":"r","annotations":{"readOnlyHint":true}}`)})
	allow.Decision = host.Allow
	if err := h.Approve("s", &allow, host.Once); !errors.Is(err, host.ErrNotAsked) {
		t.Fatalf("approve an allow: %v", err)
	}
	if err := h.Approve("s", &d, host.Always); err == nil {
		t.Fatal("approve always without approvals file succeeded")
	}
}

func TestDriftDropsSessionApproval(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "", host.Defaults())
	ctx := context.Background()
	v1 := tool(t, writeFile)
	d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: v1})
	if err := h.Approve("s", &d, host.ForSession); err != nil {
		t.Fatal(err)
	}
	// The server changes the definition (here: claims read-only) mid-session.
	v2 := tool(t, strings.Replace(writeFile, `"readOnlyHint":false,"destructiveHint":true`, `"readOnlyHint":true,"destructiveHint":false`, 1))
	d2 := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: v2})
	if d2.Decision != host.Ask {
		t.Fatalf("drifted definition: %s (a relaxing hint after drift must not be believed)", d2.Decision)
	}
	if d2.Trace[0].Detail == "" || !strings.Contains(d2.Trace[0].Detail, "drifted") {
		t.Errorf("trace does not mention drift: %+v", d2.Trace[0])
	}
	// Approving the new definition re-pins it: now its hints count again.
	if err := h.Approve("s", &d2, host.Once); err != nil {
		t.Fatal(err)
	}
	if d3 := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: v2}); d3.Decision != host.Allow {
		t.Fatalf("after approving the new definition: %s", d3.Decision)
	}
	// And going back to v1 is drift again: the old session approval is gone.
	if d4 := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: v1}); d4.Decision != host.Ask {
		t.Fatalf("back to v1: %s", d4.Decision)
	}
}

func TestAlwaysApprovalPersistsAcrossHosts(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approvals.json")
	ctx := context.Background()
	h1 := testhost.New(t, "", host.Defaults().WithApprovalsFile(file))
	call := host.Call{Session: "a", Server: "fs", Tool: tool(t, writeFile)}
	d := h1.Check(ctx, call)
	if err := h1.Approve("a", &d, host.Always); err != nil {
		t.Fatal(err)
	}
	h2 := testhost.New(t, "", host.Defaults().WithApprovalsFile(file))
	call.Session = "b"
	if d2 := h2.Check(ctx, call); d2.Decision != host.Allow {
		t.Fatalf("new host, new session: %s", d2.Decision)
	}
	grants, err := h2.Approvals().List()
	if err != nil || len(grants) != 1 || grants[0].Tool != "write_file" || grants[0].Hash != d.DefinitionHash {
		t.Fatalf("grants %+v %v", grants, err)
	}
	// A changed definition is not covered by the old grant.
	changed := tool(t, strings.Replace(writeFile, "Write a file", "Write a file, and more", 1))
	if d3 := h2.Check(ctx, host.Call{Session: "c", Server: "fs", Tool: changed}); d3.Decision != host.Ask {
		t.Fatalf("changed definition: %s", d3.Decision)
	}
	n, err := h2.Approvals().Revoke(func(g session.Grant) bool { return g.Tool == "write_file" })
	if err != nil || n != 1 {
		t.Fatalf("revoke: %d %v", n, err)
	}
}

func TestAuditLogHasOneRecordPerDecision(t *testing.T) {
	t.Parallel()
	var buf testkit.Buffer
	h := testhost.New(t, "", host.Defaults().WithAuditLog(&buf))
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile)})
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	var rec struct {
		Event    string
		Session  string
		Decision struct {
			Decision string
			Tool     string
			Trace    []policy.Step
		}
	}
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.Event != "check" || rec.Session != "s" || rec.Decision.Decision != "ask" || rec.Decision.Tool != "write_file" || len(rec.Decision.Trace) < 5 {
		t.Fatalf("record %+v", rec)
	}
}

// nativeLabeler is a Go-native plugin: observe labels every call.
type nativeLabeler struct{}

func (nativeLabeler) Name() string               { return "labeler" }
func (nativeLabeler) Matches(app, t string) bool { return true }
func (nativeLabeler) Observe(ctx context.Context, in *policy.ObserveInput) policy.ObserveResult {
	return policy.ObserveResult{Labels: []string{"seen_" + in.Tool.Name}}
}
func (nativeLabeler) CanApprove() bool { return false }
func (nativeLabeler) Check(ctx context.Context, in *policy.CheckInput) policy.PluginVerdict {
	for _, l := range in.Labels {
		if l == "seen_write_file" {
			return policy.PluginVerdict{Verdict: policy.Deny, Code: "once_only", Reason: "write_file already ran"}
		}
	}
	return policy.PluginVerdict{Verdict: policy.Abstain}
}

func TestNativePluginSeesLabelsFromObserve(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "[apps.fs]\ndefault_tools_approval_mode = \"approve\"\n", host.Defaults().WithPlugin(nativeLabeler{}))
	ctx := context.Background()
	call := host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile)}
	d := h.Check(ctx, call)
	if d.Decision != host.Allow {
		t.Fatalf("first: %s", d.Decision)
	}
	if added := h.Observe(ctx, call, &d, host.Result{Text: "ok"}); len(added) != 1 || added[0] != "seen_write_file" {
		t.Fatalf("labels added %v", added)
	}
	d = h.Check(ctx, call)
	if d.Decision != host.Deny || d.Reasons[0].Code != "once_only" {
		t.Fatalf("second: %s %+v", d.Decision, d.Reasons)
	}
}

func TestConcurrentChecksShareOneSessionSafely(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "", host.Defaults())
	tl := tool(t, writeFile)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				d := h.Check(context.Background(), host.Call{Session: "shared", Server: "fs", Tool: tl})
				if d.Decision == host.Ask && i%50 == 0 {
					_ = h.Approve("shared", &d, host.ForSession)
				}
			}
		}()
	}
	wg.Wait()
	if c := h.Session("shared").Counters(); c.Calls != 1600 {
		t.Fatalf("counted %d calls", c.Calls)
	}
}

func TestDuplicateArgumentKeysAreDeniedBeforeAnyRule(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "[apps.fs]\ndefault_tools_approval_mode = \"approve\"\n", host.Defaults())
	d := h.Check(context.Background(), host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile),
		Arguments: json.RawMessage(`{"path":"/home/me/ok","path":"/etc/passwd"}`)})
	if d.Decision != host.Deny || d.Reasons[0].Code != policy.CodeInvalidArguments {
		t.Fatalf("%s %+v", d.Decision, d.Reasons)
	}
}

type nameOnly struct{}

func (nameOnly) Name() string { return "nameless" }

// A Go plugin that handles no event is a mistake New reports, not a plugin
// that silently never runs.
func TestNewRefusesAPluginThatHandlesNoEvent(t *testing.T) {
	_, err := host.New(context.Background(), nil, host.Defaults().WithPlugin(nameOnly{}))
	if err == nil || !strings.Contains(err.Error(), `plugin "nameless" implements none of`) {
		t.Fatalf("New: %v", err)
	}
}
