package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// An admin's server allow-list (Codex's [mcp_servers] in a requirements
// file) holds for the command wrap is given, through the real binary: a
// server run under an allowed name with another command never starts,
// and wrap says which requirement refused it; the allowed command serves
// the official TypeScript client as usual.
func TestRequirementsServerAllowListHoldsForWrap(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir, _, _ := secretDir(t)
	refuse := writeFile(t, "refuse.toml", "[mcp_servers.fs.identity]\ncommand = \"docs-mcp\"\n")
	args := wrapArgs(t, "fs", nil, fsBin, dir)
	code, stdout, stderr := runTWStatus(t, "", append([]string{args[0], "--requirements", refuse}, args[1:]...)...)
	if code == 0 || stdout != "" || !strings.Contains(stderr, "refusing to start the server") ||
		!strings.Contains(stderr, `does not match the required command "docs-mcp"`) || !strings.Contains(stderr, "required by "+refuse+":1:") {
		t.Fatalf("a disallowed command: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	allow := writeFile(t, "allow.toml", "[mcp_servers.fs.identity]\ncommand = "+quoteTOML(fsBin)+"\n")
	res := runTS(t, false, nil, []tsStep{{Op: "list"}}, twBin, append([]string{args[0], "--requirements", allow}, args[1:]...)...)
	if len(res.Results) != 1 || !contains(res.Results[0].Tools, "list_directory") {
		t.Fatalf("the allowed command: %+v", res.Results)
	}
}

// In hook mode, through the real binary: the agent's own .mcp.json runs
// "fs" with a command the allow-list does not admit, so a call to one of
// its tools is denied and the audit log records the deny; when .mcp.json
// runs the allowed command, the same event is decided as usual.
func TestRequirementsServerAllowListHoldsForHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	for _, d := range []string{home, project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	reqs := writeFile(t, "requirements.toml", "[mcp_servers.fs.identity]\ncommand = \"mcp-server-filesystem\"\n")
	tools := writeFile(t, "tools.json", `{"fs":[{"name":"read_text_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}]}`)
	event := `{"session_id":"h1","hook_event_name":"PreToolUse","cwd":` + jsonQuote(project) +
		`,"tool_name":"mcp__fs__read_text_file","tool_input":{"path":"/tmp/x"}}`
	for _, tc := range []struct{ command, want string }{
		{"nc", "deny"},
		{"mcp-server-filesystem", "allow"},
	} {
		mcp := `{"mcpServers":{"fs":{"command":` + jsonQuote(tc.command) + `,"args":["/srv"]}}}`
		if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(mcp), 0o600); err != nil {
			t.Fatal(err)
		}
		auditLog := filepath.Join(dir, tc.command+".jsonl")
		cmd := exec.Command(twBin, "hook", "--agent", "claude", "--state-dir", filepath.Join(dir, "state"),
			"--tools", tools, "--requirements", reqs, "--audit", auditLog)
		cmd.Env = append(os.Environ(), "HOME="+home)
		cmd.Stdin = strings.NewReader(event)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", tc.command, err, errb.String())
		}
		var v struct {
			HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
		}
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("%s: output %q: %v", tc.command, out.String(), err)
		}
		got := v.HookSpecificOutput
		if got.PermissionDecision != tc.want {
			t.Fatalf("%s: %s (%s), want %s", tc.command, got.PermissionDecision, got.PermissionDecisionReason, tc.want)
		}
		if tc.want == "deny" && (!strings.Contains(got.PermissionDecisionReason, `server "fs" (nc) does not match`) ||
			!strings.Contains(got.PermissionDecisionReason, "required by "+reqs)) {
			t.Errorf("the reason does not say why and where: %s", got.PermissionDecisionReason)
		}
		logged, err := os.ReadFile(auditLog)
		if err != nil || !strings.Contains(string(logged), `"decision":"`+tc.want+`"`) {
			t.Errorf("%s: the audit log does not record %s (%v):\n%s", tc.command, tc.want, err, logged)
		}
	}
}
