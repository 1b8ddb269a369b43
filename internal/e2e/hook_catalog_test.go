package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

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

// What wrap lists reaches hooks: wrap in front of server-filesystem, run
// as each agent's config runs "fs" and listed by the official TypeScript
// client, writes the tool catalog; then each agent's hook decides reads
// without asking and writes with an ask (or, for agents that cannot ask, a
// deny), and a definition that changes in the catalog is drift for a
// session that pinned the old one.
func TestHookDecidesWithTheDefinitionsWrapListed(t *testing.T) {
	t.Parallel()
	w := newIDWorld(t)
	dir := w.project("app")
	w.nameFS(dir, w.realFS(dir))
	w.list(dir, w.realFS(dir))
	entries, _ := filepath.Glob(filepath.Join(w.catalog, "fs@*.json"))
	if len(entries) != 1 {
		t.Fatalf("catalog entries of fs: %v", entries)
	}
	entry := entries[0]

	for _, c := range []struct{ agent, write string }{{"claude", "ask"}, {"gemini", "deny"}, {"codex", "deny"}} {
		if v, why := w.decideIn("s1-"+c.agent, c.agent, dir, "read_text_file"); v != "allow" {
			t.Errorf("%s read_text_file: %s (%s)", c.agent, v, why)
		}
		if v, why := w.decideIn("s1-"+c.agent, c.agent, dir, "write_file"); v != c.write {
			t.Errorf("%s write_file: %s, want %s (%s)", c.agent, v, c.write, why)
		}
	}

	// The server's read_text_file changes (as a later list would write it):
	// a session that pinned the old definition no longer believes it is a read.
	if v, _ := w.decideIn("s2", "claude", dir, "read_text_file"); v != "allow" {
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
	v, why := w.decideIn("s2", "claude", dir, "read_text_file")
	if v != "ask" || !strings.Contains(why, "drift") {
		t.Fatalf("read after the definition changed: %s (%s)", v, why)
	}
}

// An "always" answered to wrap's approval prompt applies to the hooks of
// every agent too: they read the same approvals file, for the same
// definition.
func TestAlwaysApprovedThroughWrapAppliesToHooks(t *testing.T) {
	t.Parallel()
	w := newIDWorld(t)
	dir := w.project("app")
	w.nameFS(dir, w.realFS(dir))
	target := filepath.Join(dir, "a.txt")
	for _, agent := range []string{"claude", "gemini", "codex"} {
		if v, _ := w.decideIn("s1", agent, dir, "write_file"); v == "allow" {
			t.Fatalf("%s: write allowed before any approval", agent)
		}
	}
	real := w.realFS(dir)
	res := runTSFrom(t, nodeSDK(t), dir, w.env, map[string]any{
		"command": real[0], "args": real[1:], "elicitation": true, "answers": []string{"always"},
		"steps": []tsStep{{Op: "call", Name: "write_file", Arguments: map[string]any{"path": target, "content": "x"}}},
		"env":   map[string]string{"TOOLWARDEN_CATALOG": w.catalog, "XDG_CONFIG_HOME": filepath.Join(w.dir, "xdg")},
	})
	if len(res.Results) != 1 || res.Results[0].IsError || len(res.Asked) != 1 || !fileExists(target) {
		t.Fatalf("write approved always through wrap: %+v asked %d", res.Results, len(res.Asked))
	}
	eventually(t, 10*time.Second, "the catalog entry", func() bool { return w.entries() == 1 })
	for _, agent := range []string{"claude", "gemini", "codex"} {
		if v, why := w.decideIn("s2", agent, dir, "write_file"); v != "allow" {
			t.Errorf("%s: write after an always approval: %s (%s)", agent, v, why)
		}
	}
}

// proxy writes one entry per upstream, with the tools' own names (not
// the <server>__<tool> names its client sees), under the identity of the
// upstream as it started it: an agent that runs that very server itself
// finds it.
func TestProxyWritesEachUpstreamsListToTheCatalog(t *testing.T) {
	t.Parallel()
	w := newIDWorld(t)
	fsBin := w.fsBin
	memBin := npmServer(t, "mcp-server-memory")
	dir := w.project("app")
	memFile := filepath.Join(dir, "memory.json")
	cfg := writeFile(t, "config.toml", `
[mcp_servers.fs]
command = "`+fsBin+`"
args = ["`+dir+`"]

[mcp_servers.memory]
command = "`+memBin+`"
env = { MEMORY_FILE_PATH = "`+memFile+`" }
`)
	res := runTSFrom(t, nodeSDK(t), dir, w.env, map[string]any{
		"command": twBin, "args": []string{"proxy", "--config", cfg, "--approvals", w.approvals}, "steps": []tsStep{{Op: "list"}},
		"env": map[string]string{"TOOLWARDEN_CATALOG": w.catalog, "XDG_CONFIG_HOME": filepath.Join(w.dir, "xdg")},
	})
	if len(res.Results) != 1 || !contains(res.Results[0].Tools, "memory__read_graph") {
		t.Fatalf("list: %+v", res.Results)
	}
	var mem []string
	for _, name := range []string{"fs", "memory"} {
		eventually(t, 10*time.Second, name, func() bool {
			m, _ := filepath.Glob(filepath.Join(w.catalog, name+"@*.json"))
			mem = m
			return len(m) == 1
		})
	}
	data, err := os.ReadFile(mem[0])
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, string(data), `"name":"read_graph"`)
	mustContain(t, string(data), `"source":"toolwarden proxy: `+memBin)
	w.write(filepath.Join(w.home, ".claude.json"), `{"projects":{"`+dir+`":{"mcpServers":{"memory":{"command":"`+memBin+`","env":{"MEMORY_FILE_PATH":"`+memFile+`"}}}}}}`)
	ev := `{"session_id":"p1","cwd":"` + dir + `","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"mcp__memory__read_graph","tool_input":{}}`
	cmd := exec.Command(twBin, "hook", "--agent", "claude", "--state-dir", w.state, "--approvals", w.approvals)
	cmd.Env, cmd.Stdin = w.env, strings.NewReader(ev)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"permissionDecision":"allow"`) {
		t.Fatalf("read_graph: %v %s", err, out)
	}
}
