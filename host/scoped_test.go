package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// pathScoper asks about every write, not rememberable as a whole, and
// proposes the directory /repo/docs for remembering.
type pathScoper struct{}

func (pathScoper) Name() string                  { return "path-scoper" }
func (pathScoper) Matches(app, tool string) bool { return true }
func (pathScoper) CanApprove() bool              { return false }
func (pathScoper) Check(context.Context, *policy.CheckInput) policy.PluginVerdict {
	return policy.PluginVerdict{Verdict: policy.Ask, Code: "guarded", Reason: "path is guarded", Arguments: []string{"path"},
		Scopes: []policy.Scope{{Arg: "/path", Glob: "/repo/docs/**"}}}
}

// Approve with ForSessionScoped remembers the decision's scopes in the
// session, for that definition: a later call inside runs without asking
// (reason remembered_scope), one outside is asked, another session is
// asked, and a changed definition is asked. The unscoped scopes stay
// refused for such an ask.
func TestApproveScopedRemembersOnlyInsideTheScope(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "[apps.fs]\ndestructive_enabled = true\n", host.Defaults().WithPlugin(pathScoper{}))
	ctx := context.Background()
	at := func(session, path string, def *hints.Tool) host.Call {
		return host.Call{Session: session, Server: "fs", Tool: def, Arguments: json.RawMessage(`{"path":"` + path + `","content":"x"}`)}
	}
	def := tool(t, writeFile)
	d := h.Check(ctx, at("s", "/repo/docs/a.md", def))
	if d.Decision != host.Ask || d.Rememberable || len(d.Scopes) != 1 {
		t.Fatalf("decision %s rememberable %v scopes %+v", d.Decision, d.Rememberable, d.Scopes)
	}
	for _, scope := range []host.Scope{host.ForSession, host.Always} {
		if err := h.Approve("s", &d, scope); !errors.Is(err, host.ErrNotRememberable) {
			t.Errorf("Approve(%v) = %v, want ErrNotRememberable", scope, err)
		}
	}
	if err := h.Approve("s", &d, host.ForSessionScoped); err != nil {
		t.Fatal(err)
	}
	if d := h.Check(ctx, at("s", "/repo/docs/sub/b.md", def)); d.Decision != host.Allow || d.Reasons[0].Code != policy.CodeRememberedScope {
		t.Errorf("inside the scope: %s %+v, want allowed as remembered_scope", d.Decision, d.Reasons)
	}
	if d := h.Check(ctx, at("s", "/repo/src/b.go", def)); d.Decision != host.Ask {
		t.Errorf("outside the scope: %s, want ask", d.Decision)
	}
	if d := h.Check(ctx, at("other", "/repo/docs/b.md", def)); d.Decision != host.Ask {
		t.Errorf("another session: %s, want ask", d.Decision)
	}
	changed := tool(t, `{"name":"write_file","description":"changed","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`)
	if d := h.Check(ctx, at("s", "/repo/docs/b.md", changed)); d.Decision != host.Ask {
		t.Errorf("a changed definition: %s, want ask", d.Decision)
	}
}

// An ask that offers no scope cannot be approved scoped.
func TestApproveScopedRefusesAnAskWithoutScopes(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "[apps.fs]\ndestructive_enabled = true\n", host.Defaults().WithPlugin(contentFlagger{}))
	d := h.Check(context.Background(), host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile), Arguments: json.RawMessage(`{"content":"x"}`)})
	if d.Decision != host.Ask {
		t.Fatalf("decision %s", d.Decision)
	}
	if err := h.Approve("s", &d, host.ForSessionScoped); !errors.Is(err, host.ErrNotScoped) {
		t.Errorf("Approve(ForSessionScoped) = %v, want ErrNotScoped", err)
	}
}
