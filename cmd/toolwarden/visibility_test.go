package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hiderConfig writes a config whose list-only plugin hides read_text_file.
func hiderConfig(t *testing.T) string {
	t.Helper()
	wasm, err := filepath.Abs(filepath.Join("..", "..", "internal", "plugin", "testdata", "wat", "hidelist.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hider.toml")
	toml := fmt.Sprintf("[policies.hider]\nwasm = %q\nconfig = { hide = [\"read_text_file\"] }\n", wasm)
	if err := os.WriteFile(path, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// check, explain and the hook adapters decide a call to a tool a plugin's
// list event hides as tools/list would show it: hidden, so denied, with the
// plugin named. None of them ever lists tools first.
func TestEveryEntryPointDeniesAToolAPluginHides(t *testing.T) {
	t.Parallel()
	cfg := hiderConfig(t)
	call := "../../examples/calls/fs-read-file.json"

	code, out, stderr := runCLI(t, "", "check", "--config", cfg, call)
	if code != exitDeny || !strings.Contains(out, `"code":"hidden_by_plugin"`) || !strings.Contains(out, `"source":"plugin:hider"`) {
		t.Fatalf("check: exit %d %s %s", code, out, stderr)
	}
	_, out, _ = runCLI(t, "", "explain", "--config", cfg, call)
	if !strings.Contains(out, "hidden_by_plugin") || !strings.Contains(out, "plugin:hider") {
		t.Fatalf("explain:\n%s", out)
	}

	dir := t.TempDir()
	tools := writeTools(t, dir, `{"readOnlyHint":true,"openWorldHint":false}`)
	code, out, stderr = runCLI(t, claudeEvent("read_text_file"), "hook", "--agent", "claude", "--config", cfg, "--state-dir", dir, "--tools", tools)
	if code != 0 || permission(t, out) != "deny" || !strings.Contains(out, "hidden_by_plugin") || !strings.Contains(out, "hider") {
		t.Fatalf("hook: exit %d %s %s", code, out, stderr)
	}
	// The same hook without the plugin allows the read: the deny is the plugin's.
	code, out, _ = runCLI(t, claudeEvent("read_text_file"), "hook", "--agent", "claude", "--state-dir", t.TempDir(), "--tools", tools)
	if code != 0 || permission(t, out) != "allow" {
		t.Fatalf("hook without the plugin: exit %d %s", code, out)
	}
}
