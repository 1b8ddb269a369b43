package hook_test

import (
	"testing"

	"github.com/toolwarden/toolwarden/internal/hook"
)

// An after-event's outcome, as each agent sends it, is read for the
// observe record: Claude Code's and Codex's MCP result (isError), Gemini
// CLI's {llmContent, returnDisplay, error}; anything else is a success.
func TestAfterEventsSayWhetherTheCallFailed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		agent    hook.Agent
		event    string
		response string
		isError  bool
	}{
		{hook.Codex, "PostToolUse", `{"content":[{"type":"text","text":"ok"}],"isError":false}`, false},
		{hook.Codex, "PostToolUse", `{"content":[{"type":"text","text":"ENOENT"}],"isError":true}`, true},
		{hook.Claude, "PostToolUse", `[{"type":"text","text":"ok"}]`, false},
		{hook.Claude, "PostToolUse", `"plain text"`, false},
		{hook.Gemini, "AfterTool", `{"llmContent":[{"text":"ok"}],"returnDisplay":"ok"}`, false},
		{hook.Gemini, "AfterTool", `{"llmContent":"x","returnDisplay":"x","error":{"message":"failed","type":"execution_failed"}}`, true},
		{hook.Gemini, "AfterTool", `{"llmContent":"x","error":null}`, false},
	}
	for _, c := range cases {
		ev, err := hook.Parse(c.agent, []byte(`{"session_id":"s","hook_event_name":"`+c.event+`","tool_name":"mcp__fs__read","tool_input":{},"tool_response":`+c.response+`,"mcp_context":{"server_name":"fs","tool_name":"read"}}`))
		if err != nil {
			t.Fatal(err)
		}
		if ev.Phase != hook.After || ev.ResponseIsError() != c.isError {
			t.Errorf("%s %s: phase %v, is_error %v; want after, %v", c.agent, c.response, ev.Phase, ev.ResponseIsError(), c.isError)
		}
	}
}
