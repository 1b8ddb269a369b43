package policy_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// The baseline's reason is what a person is shown (a prompt, a hook's
// answer, a refusal to the model): it names the tool and says in plain
// words what it does and what follows, with no mode or hint names; those
// stay in the trace's approval_mode step, and the reason's code is the
// stable one.
func TestBaselineReasonsNameTheToolInPlainWordsAndKeepTheModeInTheTrace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, config, tool string
		annotations        map[string]any
		code, want, detail string
	}{
		{"a read-only tool is allowed", "", "read_text_file", map[string]any{"readOnlyHint": true, "openWorldHint": false},
			policy.CodeAutoReadOnly, "read_text_file only reads: allowed", "auto: tool is read-only"},
		{"a destructive tool is asked", "", "write_file", map[string]any{"destructiveHint": true, "openWorldHint": false},
			policy.CodeAutoDestructive, "write_file can change files or data: asking", "auto: tool is destructive"},
		{"an open-world tool is asked", "", "fetch_url", map[string]any{"destructiveHint": false, "openWorldHint": true},
			policy.CodeAutoOpenWorld, "fetch_url reaches outside this machine (open world): asking", "auto: tool may be destructive"},
		{"an unannotated tool is asked", "", "do_thing", nil,
			policy.CodeAutoOpenWorld, "do_thing does not say whether it changes anything or reaches outside this machine: asking", "auto: tool may be destructive"},
		{"a closed-world tool that changes nothing is allowed", "", "add", map[string]any{"destructiveHint": false, "openWorldHint": false},
			policy.CodeAutoSafe, "add neither changes anything nor reaches outside this machine: allowed", "auto: tool is neither"},
		{"prompt mode is the user's config", "[apps._default]\ndefault_tools_approval_mode = \"prompt\"\n", "list_dir", map[string]any{"readOnlyHint": true},
			policy.CodeModePrompt, "your config asks before every call of list_dir: asking", "approval mode is prompt"},
		{"approve mode is the user's config", "[apps._default]\ndefault_tools_approval_mode = \"approve\"\n", "rm_rf", map[string]any{"destructiveHint": true},
			policy.CodeModeApprove, "your config lets rm_rf run without asking: allowed", "approval mode is approve"},
		{"writes mode asks before a change", "[apps._default]\ndefault_tools_approval_mode = \"writes\"\n", "edit", nil,
			policy.CodeModeWritesWrite, "edit may change things, and your config asks before changes: asking", "approval mode is writes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := config.LoadBytes("case.toml", []byte(tt.config))
			if err != nil {
				t.Fatal(err)
			}
			rules, err := policy.Compile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c := decisionCase{Tool: tt.tool}
			tool := makeTool(t, &c, tt.annotations)
			s := session.NewStore(nil).Get("s")
			s.Pin("srv", tool.Name, tool.HashHex)
			d := rules.Decide(context.Background(), &policy.Input{Session: "s", Server: "srv", Tool: tool, Arguments: json.RawMessage(`{}`), Approvals: s})
			var reason *policy.Reason
			for i := range d.Reasons {
				if d.Reasons[i].Source == policy.StepApprovalMode {
					reason = &d.Reasons[i]
				}
			}
			if reason == nil {
				t.Fatalf("no approval_mode reason: %+v", d.Reasons)
			}
			if reason.Code != tt.code || reason.Message != tt.want {
				t.Errorf("reason = %s %q, want %s %q", reason.Code, reason.Message, tt.code, tt.want)
			}
			for _, jargon := range []string{"auto", "approval mode", "Hint", "destructive", "hints"} {
				if strings.Contains(reason.Message, jargon) {
					t.Errorf("reason %q has the jargon %q", reason.Message, jargon)
				}
			}
			var detail string
			for _, st := range d.Trace {
				if st.Step == policy.StepApprovalMode {
					detail = st.Detail
				}
			}
			if !strings.Contains(detail, tt.detail) {
				t.Errorf("trace detail %q lacks the mode words %q", detail, tt.detail)
			}
		})
	}
}
