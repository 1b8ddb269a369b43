package channel

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/policy"
)

// scopedDecision is an ask whose prompt offers remembering inside a scope.
func scopedDecision() *policy.Decision {
	d := askDecision(false)
	d.Scopes = []policy.ProposedScope{{Plugin: "argguard", Code: "arg_needs_approval", Scope: policy.Scope{Arg: "/path", Glob: "/repo/docs/**"}}}
	d.Prompt.Options = []string{policy.OptionAllowOnce, policy.OptionAllowSessionScoped, policy.OptionDeny}
	d.Prompt.Scope = "path under /repo/docs/**"
	return d
}

func TestScopedOptionIsOfferedNamedAndAnswered(t *testing.T) {
	t.Parallel()
	q := NewQuestion("write_file", scopedDecision(), json.RawMessage(`{"path":"/repo/docs/a.md"}`), true)
	if strings.Join(q.Options, ",") != "allow_once,allow_session_scoped,deny" {
		t.Fatalf("options %v", q.Options)
	}
	p := q.Params()
	field := p.RequestedSchema.(map[string]any)["properties"].(map[string]any)[Field].(map[string]any)
	titles, _ := json.Marshal(field["oneOf"])
	if !strings.Contains(string(titles), `"title":"Allow for this session for path under /repo/docs/**"`) {
		t.Errorf("the scoped option's title does not name its scope: %s", titles)
	}
	if !strings.Contains(p.Message, "remembered only for calls with path under /repo/docs/**") {
		t.Errorf("the message does not say what is remembered:\n%s", p.Message)
	}
	if got, err := q.Elicited(accept(map[string]any{Field: policy.OptionAllowSessionScoped})); err != nil || got != policy.OptionAllowSessionScoped {
		t.Errorf("Answer = %q, %v", got, err)
	}

	// A decision that proposes no scope never offers it, whatever its
	// prompt lists: Host.Approve would refuse the answer.
	d := scopedDecision()
	d.Scopes = nil
	q = NewQuestion("write_file", d, nil, true)
	if strings.Contains(strings.Join(q.Options, ","), policy.OptionAllowSessionScoped) {
		t.Errorf("offered without scopes: %v", q.Options)
	}
	if _, err := q.Elicited(accept(map[string]any{Field: policy.OptionAllowSessionScoped})); err == nil {
		t.Error("an answer of the scoped option is accepted for a question that did not offer it")
	}
}

// A request state binds the scopes its question offered: a retry whose
// decision would remember another scope is refused.
func TestStateBindsTheScopesOffered(t *testing.T) {
	t.Parallel()
	s := NewSigner(time.Minute, 16)
	b := binding()
	b.Scopes = policy.ScopesText(scopedDecision().Scopes)
	state, err := s.Mint(b)
	if err != nil {
		t.Fatal(err)
	}
	wider := scopedDecision()
	wider.Scopes[0].Glob = "/repo/**"
	b2 := b
	b2.Scopes = policy.ScopesText(wider.Scopes)
	if err := s.Redeem(state, b2); !errors.Is(err, ErrScopeChanged) {
		t.Errorf("Redeem with a wider scope = %v, want ErrScopeChanged", err)
	}
	state, _ = s.Mint(b)
	if err := s.Redeem(state, b); err != nil {
		t.Errorf("Redeem with the same scopes = %v", err)
	}
}
