package approval

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host/hints"
	"github.com/toolwarden/toolwarden/host/policy"
)

func askDecision(rememberable bool) *policy.Decision {
	d := &policy.Decision{
		Decision: policy.Ask, Rememberable: rememberable, Server: "fs", App: "fs", Tool: "write_file",
		Reasons: []policy.Reason{{Source: "approval_mode", Code: policy.CodeAutoDestructive, Message: "auto: tool is destructive"}},
		Prompt:  &policy.Prompt{Title: "Allow write_file on fs?", Message: "auto: tool is destructive", Options: []string{policy.OptionAllowOnce, policy.OptionDeny}},
	}
	d.Hints.Put(hints.Destructive, hints.True)
	if rememberable {
		d.Prompt.Options = []string{policy.OptionAllowOnce, policy.OptionAllowSession, policy.OptionAlways, policy.OptionDeny}
	}
	return d
}

func accept(content any) *mcp.ElicitationResult {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: content}}
}

func TestAnswer(t *testing.T) {
	t.Parallel()
	q := NewQuestion("write_file", askDecision(true), json.RawMessage(`{}`), true)
	cases := []struct {
		name    string
		res     *mcp.ElicitationResult
		want    string
		wantErr bool
	}{
		{"accept with a decision", accept(map[string]any{Field: "allow_session"}), policy.OptionAllowSession, false},
		{"accept with deny", accept(map[string]any{Field: "deny"}), policy.OptionDeny, false},
		{"accept without content is allow once", accept(nil), policy.OptionAllowOnce, false},
		{"accept with an empty form is allow once", accept(map[string]any{}), policy.OptionAllowOnce, false},
		{"decline is deny", &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, policy.OptionDeny, false},
		{"cancel is deny", &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}}, policy.OptionDeny, false},
		{"an option that was not offered is refused", accept(map[string]any{Field: "sudo"}), policy.OptionDeny, true},
		{"a decision that is not a string is refused", accept(map[string]any{Field: true}), policy.OptionDeny, true},
		{"content that is not an object is refused", accept("allow_once"), policy.OptionDeny, true},
		{"an unknown action is refused", &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: "yolo"}}, policy.OptionDeny, true},
		{"no answer is refused", nil, policy.OptionDeny, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := q.Answer(tc.res)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("got %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestOptionsFollowTheDecision(t *testing.T) {
	t.Parallel()
	if q := NewQuestion("w", askDecision(false), nil, true); strings.Join(q.Options, ",") != "allow_once,deny" {
		t.Errorf("not rememberable: %v", q.Options)
	}
	if q := NewQuestion("w", askDecision(true), nil, false); strings.Join(q.Options, ",") != "allow_once,allow_session,deny" {
		t.Errorf("no approvals file: %v", q.Options)
	}
	q := NewQuestion("w", askDecision(true), nil, true)
	if _, err := q.Answer(accept(map[string]any{Field: "always"})); err != nil {
		t.Errorf("always offered but refused: %v", err)
	}
	q = NewQuestion("w", askDecision(false), nil, true)
	if _, err := q.Answer(accept(map[string]any{Field: "allow_session"})); err == nil {
		t.Error("allow_session accepted for a non-rememberable ask")
	}
}

func TestParamsIsAValidForm(t *testing.T) {
	t.Parallel()
	q := NewQuestion("fs__write_file", askDecision(true), json.RawMessage(`{"path":"/tmp/x"}`), true)
	p := q.Params()
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(p.RequestedSchema)
	for _, want := range []string{`"required":["decision"]`, `"oneOf"`, `"enumNames"`, `"const":"always"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("schema lacks %s: %s", want, b)
		}
	}
	for _, want := range []string{"fs__write_file", "write_file on server fs", "destructiveHint=true", `"path": "/tmp/x"`, "auto: tool is destructive"} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, p.Message)
		}
	}
}

func TestPrettyArgumentsTruncatesOnARuneBoundary(t *testing.T) {
	t.Parallel()
	args := json.RawMessage(`{"s":"` + strings.Repeat("é", 100) + `"}`)
	out := PrettyArguments(args, 21)
	if !strings.Contains(out, "more bytes not shown") {
		t.Fatalf("not truncated: %s", out)
	}
	head := out[:strings.Index(out, "\n…")]
	if !json.Valid([]byte(`"`+strings.TrimPrefix(head, "{\n  \"s\": \"")+`"`)) && strings.ContainsRune(head, '\uFFFD') {
		t.Fatalf("cut inside a rune: %q", head)
	}
	if got := PrettyArguments(json.RawMessage(`not json`), 100); got != "not json" {
		t.Fatalf("invalid JSON shown as %q", got)
	}
}

// A question and its answer, as a proxy handles an ask from a 2026-07-28
// client: mint a state bound to the call, send the form, redeem the state
// with the retried call, then read the answer.
func Example() {
	d := askDecision(true)
	args := json.RawMessage(`{"path":"/tmp/notes.txt","content":"hello"}`)
	b := Binding{Session: "s1", Server: d.Server, Tool: d.Tool, DefinitionHash: "0123", Arguments: args}

	signer := NewSigner(10*time.Minute, 1024)
	state, _ := signer.Mint(b)
	q := NewQuestion("write_file", d, args, true)
	form := q.Params() // goes to the client, with state
	_ = form

	// The client retries with the same arguments, the state, and the answer.
	if err := signer.Redeem(state, b); err != nil {
		fmt.Println("refused:", err)
		return
	}
	choice, _ := q.Answer(accept(map[string]any{Field: "allow_session"}))
	fmt.Println(choice)
	fmt.Println(signer.Redeem(state, b))
	// Output:
	// allow_session
	// the approval was already used (request states are single-use)
}
