package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The reason `toolwarden hook` gives an agent for an ask shows the call's
// arguments as an approval prompt does: a path after 3000 bytes of
// content, flagged by a plugin, comes first; the content (flagged too) is
// cut at 2048 bytes with its count; the digest is of tool_input as the
// agent sent it; and since the flagged content cannot be shown in full,
// the reason says to approve it for this call only.
func TestHookReasonShowsFlaggedArgumentsFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wasm, err := filepath.Abs(filepath.Join("..", "..", "internal", "e2e", "testdata", "flagger.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "flagger.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[policies.flagger]\nwasm = %q\n", wasm)), 0o600); err != nil {
		t.Fatal(err)
	}
	input := `{"content":"` + strings.Repeat("x", 3000) + `","path":"/etc/cron.d/evil"}`
	event := `{"session_id":"g1","hook_event_name":"BeforeTool","tool_name":"mcp_fs_write_file","tool_input":` + input + `,"mcp_context":{"server_name":"fs","tool_name":"write_file"}}`
	code, out, stderr := runCLI(t, event, "hook", "--agent", "gemini", "--state-dir", dir, "--config", cfg, "--tools", writeTools(t, dir, `{}`))
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	var v struct{ Decision, Reason string }
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Decision != "deny" {
		t.Fatalf("gemini cannot ask, so an ask is a deny: %s %v", out, err)
	}
	lines := strings.Split(v.Reason, "\n")
	sum := sha256.Sum256([]byte(input))
	if len(lines) < 4 || !strings.HasPrefix(lines[1], "Arguments (") || lines[2] != `  * path = "/etc/cron.d/evil"` || !strings.HasPrefix(lines[3], `  * content = "xxx`) {
		t.Fatalf("flagged arguments do not come first:\n%s", v.Reason)
	}
	for _, want := range []string{"sha256 " + hex.EncodeToString(sum[:])[:16], "[952 more bytes not shown]", "for this call only"} {
		if !strings.Contains(v.Reason, want) {
			t.Errorf("reason lacks %q:\n%s", want, v.Reason)
		}
	}
}
