package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Live changes: a running wrap applies an edited config to its next
// decision and its next tool list, tells the client its tools changed,
// and refuses a config that does not load while the running policy keeps
// deciding. Driven by the official TypeScript client, in front of the real
// server-filesystem, with no restart of either.

// reloadBefore lets write_file run without asking; reloadAfter hides
// list_directory and makes write_file ask, which a client without
// elicitation cannot answer: the call is denied.
const (
	reloadBefore = `
[apps.fs.tools.write_file]
approval_mode = "approve"
`
	reloadAfter = `
[apps.fs.tools.list_directory]
enabled = false

[apps.fs.tools.write_file]
approval_mode = "prompt"
`
	// reloadBadValue does not load: line 3 holds the bad mode.
	reloadBadValue = `
[apps.fs.tools.write_file]
approval_mode = "sometimes"
`
)

// reloadBadPlugin loads, but its plugin does not: the host refuses it.
func reloadBadPlugin(dir string) string {
	return reloadAfter + "\n[policies.gone]\nwasm = " + quoteTOML(filepath.Join(dir, "missing.wasm")) + "\n"
}

func quoteTOML(s string) string { b, _ := json.Marshal(s); return string(b) }

// saveAs replaces path with the file from, as editors do: write a new file
// next to it, then rename it over the old one.
func saveAs(from, path string) tsStep {
	return tsStep{Op: "run", Name: "sh", Arguments: map[string]any{"args": []string{"-c", `cp "$0" "$1.tmp" && mv "$1.tmp" "$1"`, from, path}}}
}

// writeOver writes the file from into path in place.
func writeOver(from, path string) tsStep {
	return tsStep{Op: "run", Name: "cp", Arguments: map[string]any{"args": []string{from, path}}}
}

// awaitRefusals waits until the audit log holds n refused reloads (a
// polling bound, not a timing assertion: it fails only if none comes).
func awaitRefusals(audit string, n int) tsStep {
	script := `for i in $(seq 300); do [ "$(grep -c '"outcome":"refused"' "$0" 2>/dev/null)" -ge "$1" ] && exit 0; sleep 0.05; done; echo "no refused reload in $0" >&2; exit 1`
	return tsStep{Op: "run", Name: "sh", Arguments: map[string]any{"args": []string{"-c", script, audit, strconv.Itoa(n)}}}
}

func TestEditingARunningWrapsConfigChangesItsNextDecisionAndList(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	data, _ := filepath.EvalSymlinks(t.TempDir())
	cfgDir := t.TempDir()
	config := filepath.Join(cfgDir, "config.toml")
	after := writeFile(t, "after.toml", reloadAfter)
	bad, badPlugin := writeFile(t, "bad.toml", reloadBadValue), writeFile(t, "badplugin.toml", reloadBadPlugin(cfgDir))
	if err := os.WriteFile(config, []byte(reloadBefore), 0o600); err != nil {
		t.Fatal(err)
	}
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	a, b, c := filepath.Join(data, "a.txt"), filepath.Join(data, "b.txt"), filepath.Join(data, "c.txt")
	write := func(p string) tsStep {
		return tsStep{Op: "call", Name: "write_file", Arguments: map[string]any{"path": p, "content": "x"}}
	}
	listDir := tsStep{Op: "call", Name: "list_directory", Arguments: map[string]any{"path": data}}

	args := append([]string{"wrap", "--app", "fs", "--approvals", filepath.Join(t.TempDir(), "approvals.json"),
		"--config", config, "--audit", audit, "--"}, fsBin, data)
	res, stderr := runTSWithStderr(t, map[string]any{"elicitation": false}, []tsStep{
		{Op: "list"},                 // 0
		write(a),                     // 1: approve runs it
		listDir,                      // 2
		{Op: "resetListChanged"},     // 3
		saveAs(after, config),        // 4: an editor's save
		{Op: "waitListChanged"},      // 5
		{Op: "list"},                 // 6
		write(b),                     // 7: now asked, and the client cannot answer
		listDir,                      // 8: now hidden
		writeOver(bad, config),       // 9: a value that does not load
		awaitRefusals(audit, 1),      // 10
		writeOver(badPlugin, config), // 11: a plugin that does not load
		awaitRefusals(audit, 2),      // 12
		{Op: "list"},                 // 13
		write(c),                     // 14
	}, twBin, args...)
	r := res.Results
	if len(r) != 15 {
		t.Fatalf("results: %+v", r)
	}
	for i, x := range r {
		if x.Thrown != "" {
			t.Fatalf("step %d (%s) threw: %s", i, x.Op, x.Thrown)
		}
	}
	if !contains(r[0].Tools, "list_directory") || r[1].IsError || !fileExists(a) || r[2].IsError {
		t.Fatalf("before the edit: list %v, write %+v, list_directory %+v", r[0].Tools, r[1], r[2])
	}
	if contains(r[6].Tools, "list_directory") || !contains(r[6].Tools, "write_file") {
		t.Errorf("tools/list after the edit: %v (list_directory should be hidden)", r[6].Tools)
	}
	if !r[7].IsError || fileExists(b) {
		t.Errorf("write_file after the edit: %+v (should ask, and be denied without elicitation)", r[7])
	}
	if !r[8].IsError || !strings.Contains(r[8].Text, "list_directory") {
		t.Errorf("list_directory after the edit: %+v (should be denied as hidden)", r[8])
	}
	// The refused changes left the running policy deciding.
	if contains(r[13].Tools, "list_directory") || !r[14].IsError || fileExists(c) {
		t.Errorf("after refused changes: list %v, write_file %+v (the edited policy should still decide)", r[13].Tools, r[14])
	}
	mustContain(t, stderr, "config change refused")
	mustContain(t, stderr, config+":3:1:")
	mustContain(t, stderr, "policies.gone")
	mustContain(t, stderr, "config reloaded")
	log, _ := os.ReadFile(audit)
	mustContain(t, string(log), `"event":"reload"`)
	mustContain(t, string(log), `"outcome":"applied"`)
}

// With --no-watch, an edit changes nothing until SIGHUP, which reloads at
// once: the fallback where file events are not delivered.
func TestSIGHUPReloadsARunningWrap(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	data, _ := filepath.EvalSymlinks(t.TempDir())
	config := writeFile(t, "config.toml", reloadBefore)
	after := writeFile(t, "after.toml", reloadAfter)
	a, b := filepath.Join(data, "a.txt"), filepath.Join(data, "b.txt")
	args := []string{"wrap", "--no-watch", "--app", "fs", "--approvals", filepath.Join(t.TempDir(), "approvals.json"),
		"--config", config, "--", fsBin, data}
	res, _ := runTSWithStderr(t, map[string]any{"elicitation": false}, []tsStep{
		{Op: "list"},
		{Op: "call", Name: "write_file", Arguments: map[string]any{"path": a, "content": "x"}},
		{Op: "resetListChanged"},
		writeOver(after, config),
		{Op: "signal", Name: "SIGHUP"},
		{Op: "waitListChanged"},
		{Op: "list"},
		{Op: "call", Name: "write_file", Arguments: map[string]any{"path": b, "content": "x"}},
	}, twBin, args...)
	r := res.Results
	if len(r) != 8 {
		t.Fatalf("results: %+v", r)
	}
	for i, x := range r {
		if x.Thrown != "" {
			t.Fatalf("step %d (%s) threw: %s", i, x.Op, x.Thrown)
		}
	}
	if !contains(r[0].Tools, "list_directory") || r[1].IsError || !fileExists(a) {
		t.Fatalf("before SIGHUP: list %v, write %+v", r[0].Tools, r[1])
	}
	if contains(r[6].Tools, "list_directory") || !r[7].IsError || fileExists(b) {
		t.Errorf("after SIGHUP: list %v, write_file %+v", r[6].Tools, r[7])
	}
}

// toolwarden proxy reloads the same way: its servers stay as they were
// started, and the policy the edited file sets decides the next call.
func TestEditingARunningProxysConfigChangesItsNextDecisionAndList(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	data, _ := filepath.EvalSymlinks(t.TempDir())
	// A server the config defines is judged as Codex would too: its own
	// tables set the modes, and disabled_tools hides.
	server := "[mcp_servers.fs]\ncommand = " + quoteTOML(fsBin) + "\nargs = [" + quoteTOML(data) + "]\n"
	config := filepath.Join(t.TempDir(), "config.toml")
	before := server + "[mcp_servers.fs.tools.write_file]\napproval_mode = \"approve\"\n"
	if err := os.WriteFile(config, []byte(before), 0o600); err != nil {
		t.Fatal(err)
	}
	after := writeFile(t, "after.toml", server+"disabled_tools = [\"list_directory\"]\n[mcp_servers.fs.tools.write_file]\napproval_mode = \"prompt\"\n")
	a, b := filepath.Join(data, "a.txt"), filepath.Join(data, "b.txt")
	args := []string{"proxy", "--approvals", filepath.Join(t.TempDir(), "approvals.json"), "--config", config}
	res, _ := runTSWithStderr(t, map[string]any{"elicitation": false}, []tsStep{
		{Op: "list"},
		{Op: "call", Name: "fs__write_file", Arguments: map[string]any{"path": a, "content": "x"}},
		{Op: "resetListChanged"},
		saveAs(after, config),
		{Op: "waitListChanged"},
		{Op: "list"},
		{Op: "call", Name: "fs__write_file", Arguments: map[string]any{"path": b, "content": "x"}},
	}, twBin, args...)
	r := res.Results
	if len(r) != 7 {
		t.Fatalf("results: %+v", r)
	}
	for i, x := range r {
		if x.Thrown != "" {
			t.Fatalf("step %d (%s) threw: %s", i, x.Op, x.Thrown)
		}
	}
	if !contains(r[0].Tools, "fs__list_directory") || r[1].IsError || !fileExists(a) {
		t.Fatalf("before the edit: list %v, write %+v", r[0].Tools, r[1])
	}
	if contains(r[5].Tools, "fs__list_directory") || !contains(r[5].Tools, "fs__write_file") || !r[6].IsError || fileExists(b) {
		t.Errorf("after the edit: list %v, write_file %+v", r[5].Tools, r[6])
	}
}
