package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// contentFlagger asks about every call, remembering allowed, and flags
// the "content" argument.
type contentFlagger struct{}

func (contentFlagger) Name() string                  { return "content-flagger" }
func (contentFlagger) Matches(app, tool string) bool { return true }
func (contentFlagger) CanApprove() bool              { return false }
func (contentFlagger) Check(context.Context, *policy.CheckInput) policy.PluginVerdict {
	return policy.PluginVerdict{Verdict: policy.Ask, Code: "content", Reason: "look at the content", Remember: true, Arguments: []string{"content"}}
}

// An approval for a prompt that could not show a flagged value in full is
// for this call only: a client that answers allow_session anyway gets
// ErrNotRememberable, and the next call is asked again.
func TestApproveRefusesToRememberWhatThePromptCouldNotShow(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "[apps.fs]\ndestructive_enabled = true\n", host.Defaults().WithPlugin(contentFlagger{}))
	call := host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile),
		Arguments: json.RawMessage(`{"content":"` + strings.Repeat("x", 3000) + `","path":"/tmp/a"}`)}
	ctx := context.Background()
	d := h.Check(ctx, call)
	if d.Decision != host.Ask || d.Rememberable || d.Prompt.Incomplete == "" {
		t.Fatalf("decision %s rememberable %v incomplete %q", d.Decision, d.Rememberable, d.Prompt.Incomplete)
	}
	for _, scope := range []host.Scope{host.ForSession, host.Always} {
		if err := h.Approve("s", &d, scope); !errors.Is(err, host.ErrNotRememberable) {
			t.Errorf("Approve(%v) = %v, want ErrNotRememberable", scope, err)
		}
	}
	if err := h.Approve("s", &d, host.Once); err != nil {
		t.Fatal(err)
	}
	if d := h.Check(ctx, call); d.Decision != host.Ask {
		t.Fatalf("the next call was not asked: %s", d.Decision)
	}

	// The same flag on a short value: the prompt shows it, remembering holds.
	call.Arguments = json.RawMessage(`{"content":"hello","path":"/tmp/a"}`)
	if d := h.Check(ctx, call); !d.Rememberable || d.Prompt.Incomplete != "" {
		t.Fatalf("short flagged value: rememberable %v incomplete %q", d.Rememberable, d.Prompt.Incomplete)
	}
}
