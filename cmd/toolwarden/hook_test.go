package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTools writes a tools file for the "fs" server with the given
// read_text_file annotations.
func writeTools(t *testing.T, dir, annotations string) string {
	t.Helper()
	path := filepath.Join(dir, "tools.json")
	data := `{"fs":[{"name":"read_text_file","inputSchema":{"type":"object"},"annotations":` + annotations + `},
		{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true,"openWorldHint":false}}]}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func claudeEvent(tool string) string {
	return `{"session_id":"c1","hook_event_name":"PreToolUse","tool_name":"mcp__fs__` + tool + `","tool_input":{"path":"/tmp/x"}}`
}

func permission(t *testing.T, out string) string {
	t.Helper()
	var v struct {
		HookSpecificOutput struct{ PermissionDecision string }
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("hook output %q: %v", out, err)
	}
	return v.HookSpecificOutput.PermissionDecision
}

func TestHookDecidesClaudeCodeEventsWithAnnotationsFromTheToolsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tools := writeTools(t, dir, `{"readOnlyHint":true,"openWorldHint":false}`)
	args := []string{"hook", "--agent", "claude", "--state-dir", dir, "--tools", tools}
	code, out, stderr := runCLI(t, claudeEvent("read_text_file"), args...)
	if code != 0 || permission(t, out) != "allow" {
		t.Fatalf("read: exit %d %s %s", code, out, stderr)
	}
	code, out, _ = runCLI(t, claudeEvent("write_file"), args...)
	if code != 0 || permission(t, out) != "ask" {
		t.Fatalf("write: exit %d %s", code, out)
	}
	// Without the tools file the same read tool has no annotations: asked.
	code, out, _ = runCLI(t, claudeEvent("read_text_file"), "hook", "--agent", "claude", "--state-dir", t.TempDir())
	if code != 0 || permission(t, out) != "ask" {
		t.Fatalf("read without definitions: exit %d %s", code, out)
	}
}

func TestHookSessionsPinDefinitionsAcrossProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// First process: the tool is destructive.
	tools := writeTools(t, dir, `{"destructiveHint":true,"openWorldHint":false}`)
	args := []string{"hook", "--agent", "claude", "--state-dir", dir, "--tools", tools}
	if _, out, _ := runCLI(t, claudeEvent("read_text_file"), args...); permission(t, out) != "ask" {
		t.Fatalf("first: %s", out)
	}
	// Second process: the server now claims read-only. That is drift from the
	// pin kept in the session file, so the relaxing claim is not believed.
	writeTools(t, dir, `{"readOnlyHint":true,"openWorldHint":false}`)
	if _, out, _ := runCLI(t, claudeEvent("read_text_file"), args...); permission(t, out) != "ask" {
		t.Fatalf("after drift: %s", out)
	}
	// A fresh session has no pin and believes the (pinned) hints.
	ev := strings.Replace(claudeEvent("read_text_file"), `"c1"`, `"c2"`, 1)
	if _, out, _ := runCLI(t, ev, args...); permission(t, out) != "allow" {
		t.Fatalf("fresh session: %s", out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "c1.json"))
	if err != nil || !strings.Contains(string(data), `"read_text_file"`) {
		t.Fatalf("session file: %s %v", data, err)
	}
}

func TestHookTurnsAskIntoAnExplainedDenyForGemini(t *testing.T) {
	t.Parallel()
	ev := `{"session_id":"g","hook_event_name":"BeforeTool","tool_name":"mcp_fs_write_file","tool_input":{},"mcp_context":{"server_name":"fs","tool_name":"write_file"}}`
	code, out, _ := runCLI(t, ev, "hook", "--agent", "gemini", "--state-dir", t.TempDir())
	var v struct{ Decision, Reason string }
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 || v.Decision != "deny" || !strings.Contains(v.Reason, "approval_mode") {
		t.Fatalf("exit %d out %s", code, out)
	}
}

func TestHookFailsClosedOnBadInput(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"not JSON":     `{"tool_name":`,
		"no tool name": `{"session_id":"x"}`,
		"path session": `{"session_id":"../../etc","tool_name":"Bash"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := runCLI(t, in, "hook", "--agent", "claude", "--state-dir", t.TempDir())
			if code != exitBlock || out != "" || !strings.Contains(stderr, "call blocked") {
				t.Fatalf("exit %d out %q stderr %q", code, out, stderr)
			}
		})
	}
}

func TestHookObservesAfterEvents(t *testing.T) {
	t.Parallel()
	ev := `{"session_id":"p","hook_event_name":"PostToolUse","tool_name":"mcp__fs__write_file","tool_input":{},"tool_response":"done"}`
	code, out, stderr := runCLI(t, ev, "hook", "--agent", "claude", "--state-dir", t.TempDir())
	if code != 0 || out != "" {
		t.Fatalf("exit %d out %q stderr %q", code, out, stderr)
	}
}
