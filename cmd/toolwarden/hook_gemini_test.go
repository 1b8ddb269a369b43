package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// geminiBeforeTool is Gemini CLI 0.61's BeforeTool event for an MCP tool
// whose server config Gemini did not find, so that it sent no mcp_context.
func geminiBeforeTool(cwd, toolName string) string {
	return `{"session_id":"g1","transcript_path":"/tmp/chat.json","cwd":"` + cwd + `","hook_event_name":"BeforeTool","timestamp":"2026-11-28T06:00:00.000Z","tool_name":"` + toolName + `","tool_input":{"path":"/tmp/x"}}`
}

// Through the command, a Gemini tool name without mcp_context is resolved
// against the servers in the user's ~/.gemini/settings.json: with servers
// "a" and "a_b" both configured, mcp_a_b_read_text_file is blocked (exit 2)
// with a note that names both readings; with only "a_b", it is decided as
// tool read_text_file of server a_b, whose rules then apply.
func TestHookResolvesGeminiToolNamesAgainstGeminisSettings(t *testing.T) {
	t.Parallel()
	home, project := t.TempDir(), t.TempDir()
	settings := filepath.Join(home, ".gemini", "settings.json")
	tools := filepath.Join(t.TempDir(), "tools.json")
	writeTestFile(t, tools, `{"a_b":[{"name":"read_text_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}]}`)
	vars := map[string]string{"HOME": home, catalogEnv: "off"}
	args := []string{"hook", "--agent", "gemini", "--state-dir", t.TempDir(), "--tools", tools}

	writeTestFile(t, settings, `{"mcpServers":{"a":{"command":"srv-a"},"a_b":{"command":"srv-ab"}}}`)
	code, out, stderr := runCLIEnv(t, vars, geminiBeforeTool(project, "mcp_a_b_read_text_file"), args...)
	if code != exitBlock || out != "" || !strings.Contains(stderr, `server "a" tool "b_read_text_file"`) || !strings.Contains(stderr, `server "a_b" tool "read_text_file"`) {
		t.Fatalf("ambiguous name: exit %d, stdout %q, stderr %q; want exit 2 naming both readings", code, out, stderr)
	}

	writeTestFile(t, settings, `{"mcpServers":{"a_b":{"command":"srv-ab"}}}`)
	code, out, stderr = runCLIEnv(t, vars, geminiBeforeTool(project, "mcp_a_b_read_text_file"), args...)
	var answer struct{ Decision, Reason string }
	if code != 0 || json.Unmarshal([]byte(out), &answer) != nil || answer.Decision != "allow" || !strings.Contains(answer.Reason, "a_b/read_text_file") {
		t.Fatalf("resolved name: exit %d, stdout %q, stderr %q; want an allow of a_b/read_text_file", code, out, stderr)
	}
}
