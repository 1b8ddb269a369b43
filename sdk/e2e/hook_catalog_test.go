package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hookAnswer runs the real binary's hook for one agent event and reads
// its answer as allow, ask or deny (Codex's allow is no output at all).
func hookAnswer(t *testing.T, catalogDir, stateDir, approvals, agent, event string) (verdict, reason string) {
	t.Helper()
	cmd := exec.Command(twBin, "hook", "--agent", agent, "--state-dir", stateDir, "--approvals", approvals)
	cmd.Env = append(os.Environ(), "TOOLWARDEN_CATALOG="+catalogDir)
	cmd.Stdin = strings.NewReader(event)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook --agent %s: %v\n%s\n%s", agent, err, out.String(), errb.String())
	}
	if agent == "codex" && out.Len() == 0 {
		return "allow", ""
	}
	var v struct {
		Decision, Reason   string
		HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("hook --agent %s answer %q: %v", agent, out.String(), err)
	}
	if agent == "gemini" {
		return v.Decision, v.Reason
	}
	return v.HookSpecificOutput.PermissionDecision, v.HookSpecificOutput.PermissionDecisionReason
}

// hookEvent is the payload each agent sends before an MCP tool of server
// "fs" runs.
func hookEvent(agent, session, tool, cwd string, input map[string]any) string {
	in, _ := json.Marshal(input)
	switch agent {
	case "gemini":
		return `{"session_id":"` + session + `","transcript_path":"/tmp/gemini-chat.json","cwd":"` + cwd + `","hook_event_name":"BeforeTool","timestamp":"2026-11-26T09:00:00.000Z","tool_name":"mcp_fs_` + tool + `","tool_input":` + string(in) + `,"mcp_context":{"server_name":"fs","tool_name":"` + tool + `"}}`
	case "codex":
		return `{"session_id":"` + session + `","transcript_path":"/tmp/rollout.jsonl","cwd":"` + cwd + `","hook_event_name":"PreToolUse","model":"gpt-5-codex","permission_mode":"default","tool_name":"mcp__fs__` + tool + `","tool_input":` + string(in) + `,"tool_use_id":"call_1"}`
	}
	return `{"session_id":"` + session + `","transcript_path":"/tmp/claude.jsonl","cwd":"` + cwd + `","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"mcp__fs__` + tool + `","tool_input":` + string(in) + `}`
}

// What wrap lists reaches hooks: wrap in front of server-filesystem, listed
// by the official TypeScript client, writes the tool catalog; then each
// agent's hook decides reads without asking and writes with an ask (or,
// for agents that cannot ask, a deny), and a definition that changes in
// the catalog is drift for a session that pinned the old one.
func TestHookDecidesWithTheDefinitionsWrapListed(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	catalogDir := filepath.Join(t.TempDir(), "catalog")
	approvals := filepath.Join(t.TempDir(), "approvals.json")
	res := runTSScript(t, map[string]any{"env": map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "TOOLWARDEN_CATALOG": catalogDir}},
		[]tsStep{{Op: "list"}}, twBin, "wrap", "--app", "fs", "--approvals", approvals, "--", fsBin, dir)
	if len(res.Results) != 1 || !contains(res.Results[0].Tools, "read_text_file") {
		t.Fatalf("list: %+v", res.Results)
	}
	entry := filepath.Join(catalogDir, "fs.json")
	eventually(t, 10*time.Second, "the catalog entry", func() bool { return fileExists(entry) })

	read := map[string]any{"path": filepath.Join(dir, "a.txt")}
	write := map[string]any{"path": filepath.Join(dir, "a.txt"), "content": "x"}
	for _, c := range []struct{ agent, write string }{{"claude", "ask"}, {"gemini", "deny"}, {"codex", "deny"}} {
		state := t.TempDir()
		if v, why := hookAnswer(t, catalogDir, state, approvals, c.agent, hookEvent(c.agent, "s1", "read_text_file", dir, read)); v != "allow" {
			t.Errorf("%s read_text_file: %s (%s)", c.agent, v, why)
		}
		if v, why := hookAnswer(t, catalogDir, state, approvals, c.agent, hookEvent(c.agent, "s1", "write_file", dir, write)); v != c.write {
			t.Errorf("%s write_file: %s, want %s (%s)", c.agent, v, c.write, why)
		}
	}

	// The server's read_text_file changes (as a later list would write it):
	// a session that pinned the old definition no longer believes it is a read.
	state := t.TempDir()
	if v, _ := hookAnswer(t, catalogDir, state, approvals, "claude", hookEvent("claude", "s2", "read_text_file", dir, read)); v != "allow" {
		t.Fatalf("read before the change: %s", v)
	}
	data, err := os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	var e map[string]any
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatal(err)
	}
	edited := false
	for _, tool := range e["tools"].([]any) {
		if def := tool.(map[string]any); def["name"] == "read_text_file" {
			def["description"] = "Read a file, and upload it."
			edited = true
		}
	}
	if !edited {
		t.Fatalf("read_text_file not in the catalog entry:\n%s", data)
	}
	data, _ = json.Marshal(e)
	if err := os.WriteFile(entry, data, 0o600); err != nil {
		t.Fatal(err)
	}
	v, why := hookAnswer(t, catalogDir, state, approvals, "claude", hookEvent("claude", "s2", "read_text_file", dir, read))
	if v != "ask" || !strings.Contains(why, "drift") {
		t.Fatalf("read after the definition changed: %s (%s)", v, why)
	}
}

// An "always" answered to wrap's approval prompt applies to the hooks of
// every agent too: they read the same approvals file, for the same
// definition.
func TestAlwaysApprovedThroughWrapAppliesToHooks(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	catalogDir := filepath.Join(t.TempDir(), "catalog")
	approvals := filepath.Join(t.TempDir(), "approvals.json")
	target := filepath.Join(dir, "a.txt")
	write := map[string]any{"path": target, "content": "x"}
	for _, agent := range []string{"claude", "gemini", "codex"} {
		if v, _ := hookAnswer(t, catalogDir, t.TempDir(), approvals, agent, hookEvent(agent, "s1", "write_file", dir, write)); v == "allow" {
			t.Fatalf("%s: write allowed before any approval", agent)
		}
	}
	res := runTSScript(t, map[string]any{"elicitation": true, "answers": []string{"always"}, "env": map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "TOOLWARDEN_CATALOG": catalogDir}},
		[]tsStep{{Op: "call", Name: "write_file", Arguments: write}}, twBin, "wrap", "--app", "fs", "--approvals", approvals, "--", fsBin, dir)
	if len(res.Results) != 1 || res.Results[0].IsError || len(res.Asked) != 1 || !fileExists(target) {
		t.Fatalf("write approved always through wrap: %+v asked %d", res.Results, len(res.Asked))
	}
	for _, agent := range []string{"claude", "gemini", "codex"} {
		if v, why := hookAnswer(t, catalogDir, t.TempDir(), approvals, agent, hookEvent(agent, "s2", "write_file", dir, write)); v != "allow" {
			t.Errorf("%s: write after an always approval: %s (%s)", agent, v, why)
		}
	}
}

// proxy writes one entry per upstream, with the tools' own names (not
// the <server>__<tool> names its client sees).
func TestProxyWritesEachUpstreamsListToTheCatalog(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	memBin := npmServer(t, "mcp-server-memory")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	catalogDir := filepath.Join(t.TempDir(), "catalog")
	cfg := writeFile(t, "config.toml", `
[mcp_servers.fs]
command = "`+fsBin+`"
args = ["`+dir+`"]

[mcp_servers.memory]
command = "`+memBin+`"
env = { MEMORY_FILE_PATH = "`+filepath.Join(dir, "memory.json")+`" }
`)
	res := runTSScript(t, map[string]any{"env": map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "TOOLWARDEN_CATALOG": catalogDir}},
		[]tsStep{{Op: "list"}}, twBin, "proxy", "--config", cfg, "--approvals", filepath.Join(t.TempDir(), "approvals.json"))
	if len(res.Results) != 1 || !contains(res.Results[0].Tools, "memory__read_graph") {
		t.Fatalf("list: %+v", res.Results)
	}
	for _, name := range []string{"fs.json", "memory.json"} {
		eventually(t, 10*time.Second, name, func() bool { return fileExists(filepath.Join(catalogDir, name)) })
	}
	data, err := os.ReadFile(filepath.Join(catalogDir, "memory.json"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, string(data), `"name":"read_graph"`)
	mustContain(t, string(data), `"source":"toolwarden proxy: `+memBin)
	ev := `{"session_id":"p1","cwd":"` + dir + `","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"mcp__memory__read_graph","tool_input":{}}`
	if v, why := hookAnswer(t, catalogDir, t.TempDir(), filepath.Join(t.TempDir(), "a.json"), "claude", ev); v != "allow" {
		t.Fatalf("read_graph: %s (%s)", v, why)
	}
}
