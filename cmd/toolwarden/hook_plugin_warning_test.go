package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHookSaysWhichPluginDidNotLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	src := "[policies.mine]\nwasm = \"missing.wasm\"\n\n[policy.argguard]\nbuiltin = \"argguard\"\n\n[mcp_servers.t]\ncommand = \"true\"\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ev := `{"session_id":"c1","hook_event_name":"PreToolUse","tool_name":"mcp__t__x","tool_input":{}}`
	_, _, stderr := runCLI(t, ev, "hook", "--agent", "claude", "--config", cfg, "--state-dir", filepath.Join(dir, "state"),
		"--catalog", filepath.Join(dir, "catalog"), "--approvals", filepath.Join(dir, "c.json"))
	for _, want := range []string{"policy plugin did not load", "policies.mine", "missing.wasm", "policy", "is read by neither toolwarden nor Codex"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %q on stderr:\n%s", want, stderr)
		}
	}
}
