package channel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
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
			got, err := q.Elicited(tc.res)
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
	if _, err := q.Elicited(accept(map[string]any{Field: "always"})); err != nil {
		t.Errorf("always offered but refused: %v", err)
	}
	q = NewQuestion("w", askDecision(false), nil, true)
	if _, err := q.Elicited(accept(map[string]any{Field: "allow_session"})); err == nil {
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
	for _, want := range []string{`"required":["decision"]`, `"oneOf"`, `"const":"always"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("schema lacks %s: %s", want, b)
		}
	}
	// One shape per field (question_form_test.go says why).
	if strings.Contains(string(b), `"enum"`) {
		t.Errorf("a current client's form also has enum: %s", b)
	}
	for _, want := range []string{"fs__write_file", "write_file on server fs", "destructiveHint=true", `path = "/tmp/x"`, "auto: tool is destructive"} {
		if !strings.Contains(p.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, p.Message)
		}
	}
}

// The prompt shows what a human decides on, however the call is built: a
// path after 3000 bytes of content, a flagged argument first, a cut on a
// rune boundary, the digest of the arguments as sent; and when it cannot
// show a flagged value in full, it offers neither allow_session nor always
// and says why.
func TestMessageShowsWhatMatters(t *testing.T) {
	t.Parallel()
	content := strings.Repeat("x", 3000)
	contentFirst := `{"content":"` + content + `","path":"/etc/cron.d/evil"}`
	flagged := func(incomplete string, args ...string) *policy.Decision {
		d := askDecision(incomplete == "")
		d.Flagged = args
		d.Prompt.Incomplete = incomplete
		return d
	}
	cases := []struct {
		name    string
		d       *policy.Decision
		args    string
		want    []string
		options string
	}{
		{"the path after 3000 bytes of content is shown, the content cut", askDecision(true), contentFirst,
			[]string{`    path = "/etc/cron.d/evil"`, `    content = "xxx`, "[2744 more bytes not shown]", "2744 bytes cut from 1 value"},
			"allow_once,allow_session,always,deny"},
		{"a flagged path comes first", flagged("", "/path"), contentFirst,
			[]string{"):\n  * path = \"/etc/cron.d/evil\"\n    content = "},
			"allow_once,allow_session,always,deny"},
		{"a flagged value that is cut gives up remembering and says why", flagged("the flagged argument /content is too long to show in full", "/content"), contentFirst,
			[]string{"cannot be remembered: the prompt cannot show everything it decides on (the flagged argument /content is too long", `  * content = "xxx`},
			"allow_once,deny"},
		{"a cut lands on a rune boundary", askDecision(true), `{"s":"` + strings.Repeat("é", 300) + `"}`,
			[]string{`s = "éé`, "more bytes not shown]"},
			"allow_once,allow_session,always,deny"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := NewQuestion("write_file", tc.d, json.RawMessage(tc.args), true)
			msg := q.Message()
			for _, want := range tc.want {
				if !strings.Contains(msg, want) {
					t.Errorf("message lacks %q:\n%s", want, msg)
				}
			}
			sum := sha256.Sum256([]byte(tc.args))
			if !strings.Contains(msg, "sha256 "+hex.EncodeToString(sum[:])[:16]) {
				t.Errorf("message lacks the digest of the arguments as sent:\n%s", msg)
			}
			if !utf8.ValidString(msg) || strings.ContainsRune(msg, utf8.RuneError) {
				t.Errorf("message holds a broken rune")
			}
			if got := strings.Join(q.Options, ","); got != tc.options {
				t.Errorf("options %s, want %s", got, tc.options)
			}
		})
	}
}

// Nothing a server, a plugin or a caller writes can start a line of the
// prompt: a title, a tool name, a reason and an argument key that spell
// "Tool:" or "Arguments" stay escaped on their own line.
func TestMessageCannotBeForged(t *testing.T) {
	t.Parallel()
	d := askDecision(true)
	d.Tool = "write_file\nTool: read_file"
	d.Prompt.Title = "Allow read_file?\n\nTool: read_file (server safe)"
	d.Prompt.Message = "read-only\nHints: readOnlyHint=true"
	args := `{"x\nArguments (2 bytes, sha256 0000000000000000):\n    path":"\u2028Why: safe"}`
	q := NewQuestion("fs__write_file\u202e", d, json.RawMessage(args), true)
	msg := q.Message()
	count := map[string]int{}
	for _, l := range strings.Split(msg, "\n") {
		for _, p := range []string{"Tool:", "Why:", "Hints:", "Arguments", "    path"} {
			if strings.HasPrefix(l, p) {
				count[p]++
			}
		}
	}
	for _, p := range []string{"Tool:", "Why:", "Hints:", "Arguments"} {
		if count[p] != 1 {
			t.Errorf("%d lines start with %q:\n%s", count[p], p, msg)
		}
	}
	if count["    path"] != 0 || strings.ContainsRune(msg, '\u2028') || strings.ContainsRune(msg, '\u202e') {
		t.Errorf("a forged line or a raw separator or bidi control got through:\n%s", msg)
	}
}

// A decision that is not rememberable offers allow_once and deny only,
// whatever options its prompt lists, so that an answer the host would
// refuse to remember is never offered (and an answer not offered is
// refused by Answer).
func TestQuestionOffersOnlyWhatTheHostWillHonour(t *testing.T) {
	t.Parallel()
	d := askDecision(true)
	d.Rememberable = false
	q := NewQuestion("w", d, nil, true)
	if got := strings.Join(q.Options, ","); got != "allow_once,deny" {
		t.Fatalf("options %s", got)
	}
	for _, o := range []string{policy.OptionAllowSession, policy.OptionAlways} {
		if _, err := q.Elicited(accept(map[string]any{Field: o})); err == nil {
			t.Errorf("%s accepted", o)
		}
	}
	b, _ := json.Marshal(q.Params().RequestedSchema)
	if strings.Contains(string(b), "allow_session") || strings.Contains(string(b), `"always"`) {
		t.Errorf("schema offers remembering: %s", b)
	}
}

// Two calls that differ only in lone surrogates get different prompts.
func TestMessageKeepsLoneSurrogatesApart(t *testing.T) {
	t.Parallel()
	a := NewQuestion("w", askDecision(true), json.RawMessage(`{"s":"\ud800"}`), true)
	b := NewQuestion("w", askDecision(true), json.RawMessage(`{"s":"\udfff"}`), true)
	if a.Message() == b.Message() || !strings.Contains(a.Message(), `ud800`) || !strings.Contains(b.Message(), `udfff`) {
		t.Fatalf("lone surrogates look alike:\n%s\n%s", a.Message(), b.Message())
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
	choice, _ := q.Elicited(accept(map[string]any{Field: "allow_session"}))
	fmt.Println(choice)
	fmt.Println(signer.Redeem(state, b))
	// Output:
	// allow_session
	// the approval was already used (request states are single-use)
}
