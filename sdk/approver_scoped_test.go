package sdk_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/sdk"
)

// docsScoper asks about every write, proposing /docs/** for remembering.
type docsScoper struct{}

func (docsScoper) Name() string               { return "docs-scoper" }
func (docsScoper) Matches(app, t string) bool { return true }
func (docsScoper) CanApprove() bool           { return false }
func (docsScoper) Check(_ context.Context, in *policy.CheckInput) policy.PluginVerdict {
	if in.Tool.Name != "write_file" {
		return policy.PluginVerdict{}
	}
	return policy.PluginVerdict{Verdict: policy.Ask, Code: "guarded", Reason: "path is guarded", Arguments: []string{"path"},
		Scopes: []policy.Scope{{Arg: "/path", Glob: "/docs/**"}}}
}

// A Go agent's approver sees the scoped option with its scope, and its
// AllowSessionScoped answer lets later writes inside the scope run
// without asking while others are asked.
func TestGuardApproverAnswersTheScopedOption(t *testing.T) {
	t.Parallel()
	f := newFiles()
	var mu sync.Mutex
	var questions []*sdk.Question
	a := sdk.ApproverFunc(func(_ context.Context, q *sdk.Question) (sdk.Answer, error) {
		mu.Lock()
		questions = append(questions, q)
		mu.Unlock()
		if q.Offers(sdk.AllowSessionScoped) {
			return sdk.AllowSessionScoped, nil
		}
		return sdk.AllowOnce, nil
	})
	g := sdk.New(testhost.New(t, "[apps.fs]\ndestructive_enabled = true\n", host.Defaults().WithPlugin(docsScoper{})), sdk.WithApprover(a))
	c := g.Client("fs", f.connect(t))
	for _, p := range []string{"/docs/a.md", "/docs/sub/b.md", "/src/c.go"} {
		if out, isErr := call(t, c, "write_file", map[string]any{"path": p, "content": "x"}); isErr {
			t.Fatalf("write %s: %s", p, out)
		}
	}
	if len(questions) != 2 {
		t.Fatalf("asked %d times, want 2 (docs/a.md, src/c.go)", len(questions))
	}
	q := questions[0]
	if got := answers(q.Options); got != "allow_once,allow_session_scoped,deny" || q.Scope != "path under /docs/**" {
		t.Errorf("first question: options %s scope %q", got, q.Scope)
	}
	if a, err := sdk.ParseAnswer("session_scoped"); err != nil || a != sdk.AllowSessionScoped {
		t.Errorf("ParseAnswer(session_scoped) = %v, %v", a, err)
	}
}

func answers(list []sdk.Answer) string {
	s := make([]string, len(list))
	for i, a := range list {
		s[i] = string(a)
	}
	return strings.Join(s, ",")
}
