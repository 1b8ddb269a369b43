package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A hook session carries the lethal trifecta's taint from one process to the
// next in its file. An attacker who damages that file (or a disk that does)
// must not buy a fresh, untainted session: the exfiltrating call stays
// blocked, and the damaged file is kept as it was, for the user to look at.
func TestADamagedSessionFileNeverForgetsTheSessionsTaint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	writeFileT(t, cfg, `
[apps.vault]
hints = { reads_private_data = true }
[apps.web]
hints = { sees_untrusted_content = true }
[apps.mail]
default_tools_approval_mode = "approve"
hints = { can_exfiltrate = true }

[policies.trifecta]
builtin = "trifecta"
config = { mode = "deny" }
`)
	args := []string{"hook", "--agent", "claude", "--config", cfg, "--state-dir", dir, "--catalog", "off"}
	event := func(phase, server, tool string) string {
		return `{"session_id":"s1","hook_event_name":"` + phase + `","tool_name":"mcp__` + server + `__` + tool + `","tool_input":{"to":"x"},"tool_response":"ok"}`
	}
	send := func() string {
		t.Helper()
		code, out, stderr := runCLI(t, event("PreToolUse", "mail", "send"), args...)
		if code == exitBlock {
			return "blocked: " + stderr
		}
		return permission(t, out)
	}
	if got := send(); got != "allow" {
		t.Fatalf("before any taint, send: %s", got)
	}
	for _, leg := range [][2]string{{"vault", "read"}, {"web", "fetch"}} {
		if code, _, stderr := runCLI(t, event("PostToolUse", leg[0], leg[1]), args...); code != 0 {
			t.Fatalf("after %s: exit %d %s", leg[0], code, stderr)
		}
	}
	if got := send(); got != "deny" {
		t.Fatalf("tainted session, send: %s", got)
	}

	file := filepath.Join(dir, "s1.json")
	for name, damage := range map[string][]byte{
		"cut short":            readPrefix(t, file, 20),
		"another version":      []byte(`{"version":7,"id":"s1"}`),
		"a plugin over bounds": []byte(`{"version":1,"id":"s1","plugins":{"trifecta":{"entries":{"":"x"}}}}`),
	} {
		if err := os.WriteFile(file, damage, 0o600); err != nil {
			t.Fatal(err)
		}
		got := send()
		if !strings.HasPrefix(got, "blocked: ") || !strings.Contains(got, file) || !strings.Contains(got, "move the file away") {
			t.Errorf("%s: send after the session file was damaged: %s", name, got)
		}
		if kept, _ := os.ReadFile(file); !bytes.Equal(kept, damage) {
			t.Errorf("%s: the damaged session file was changed: %q", name, kept)
		}
	}
}

func writeFileT(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readPrefix(t *testing.T, path string, n int) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil || len(data) < n {
		t.Fatalf("session file %s: %v (%d bytes)", path, err, len(data))
	}
	return data[:n]
}
