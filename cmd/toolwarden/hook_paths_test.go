package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// In hook mode a path argument is resolved against the event's cwd (the
// agent's directory), or against a listed server's configured cwd there;
// without a cwd, deny rules fail closed on relative paths.
func TestHookResolvesPathsAgainstTheEventsCwd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
[mcp_servers.fs]
command = "server-that-is-not-started"
cwd = "sub"

[policies.argguard]
builtin = "argguard"
[policies.argguard.config]
rules = [
  { tool = "Write", arg = "file_path", deny_glob = %q },
  { tool = "write_file", arg = "path", deny_glob = %q },
]
`, filepath.Join(dir, "secret", "**"), filepath.Join(dir, "sub", "secret", "**"))), 0o600); err != nil {
		t.Fatal(err)
	}
	event := func(tool, key, path, cwd string) string {
		ev := map[string]any{"session_id": "c1", "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": map[string]any{key: path}}
		if cwd != "" {
			ev["cwd"] = cwd
		}
		b, _ := json.Marshal(ev)
		return string(b)
	}
	reason := func(out string) string {
		var v struct {
			HookSpecificOutput struct{ PermissionDecisionReason string }
		}
		_ = json.Unmarshal([]byte(out), &v)
		return v.HookSpecificOutput.PermissionDecisionReason
	}
	for _, c := range []struct {
		name, event, want, reason string
	}{
		{"the agent's own tool resolves against the event's cwd", event("Write", "file_path", "secret/x", dir), "deny",
			`(resolved: "` + filepath.Join(dir, "secret", "x") + `")`},
		{"the same path from elsewhere is another file", event("Write", "file_path", "secret/x", filepath.Join(dir, "elsewhere")), "ask", ""},
		{"an event without cwd fails closed", event("Write", "file_path", "secret/x", ""), "deny", "working directory is unknown"},
		{"a listed server resolves against its configured cwd", event("mcp__fs__write_file", "path", "secret/x", dir), "deny",
			`(resolved: "` + filepath.Join(dir, "sub", "secret", "x") + `")`},
		{"a listed server's ../ is resolved too", event("mcp__fs__write_file", "path", "../sub/secret/x", dir), "deny", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, stderr := runCLI(t, c.event, "hook", "--agent", "claude", "--config", cfg, "--state-dir", t.TempDir())
			if code != 0 || permission(t, out) != c.want || !strings.Contains(reason(out), c.reason) {
				t.Fatalf("exit %d: %s %s\nwant %s with %q", code, out, stderr, c.want, c.reason)
			}
		})
	}
}
