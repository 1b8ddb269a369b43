package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// principalConfig: deploy's tools are for ops, and only leads approve.
const principalConfig = `
[mcp_servers.deploy]
command = "deploy-mcp"
[apps.deploy]
groups = ["ops"]
approvers = ["group:leads"]
`

const rolloutCall = `{"server":"deploy","tool":{"name":"rollout","inputSchema":{"type":"object"},"annotations":{"destructiveHint":true}},"arguments":{}}`

func writePrincipalConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(principalConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// check decides as the caller --principal and --group name, as serve
// would after authenticating it; without them, as the local front ends
// do (no caller: a restricted tool is denied).
func TestCheckDecidesAsThePrincipalItIsGiven(t *testing.T) {
	t.Parallel()
	cfg := writePrincipalConfig(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in the decision's JSON
	}{
		{"a caller outside the group is denied", []string{"--principal", "mallory", "--group", "dev"}, exitDeny, `"code":"principal_not_allowed"`},
		{"a group differing in case is not the group", []string{"--principal", "mallory", "--group", "OPS"}, exitDeny, `"code":"principal_not_allowed"`},
		{"a member of the group is asked, with who may approve", []string{"--principal", "dave", "--group", "dev", "--group", "ops"}, exitAsk, `"approvers":["group:leads"]`},
		{"no principal is no caller: denied", nil, exitDeny, `no caller is known here`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"check", "--config", cfg}, tc.args...)
			code, out, stderr := runCLI(t, rolloutCall, append(args, "-")...)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Fatalf("exit %d (want %d), out %s, stderr %s; want %s in the output", code, tc.code, out, stderr, tc.want)
			}
		})
	}
}

// explain shows the principal rule that decided, and who must approve.
func TestExplainShowsThePrincipalRuleThatDecided(t *testing.T) {
	t.Parallel()
	cfg := writePrincipalConfig(t)
	_, out, stderr := runCLI(t, rolloutCall, "explain", "--config", cfg, "--principal", "dave", "--group", "ops", "-")
	for _, want := range []string{
		"principals allowed [apps.deploy] caller dave (groups ops) is admitted by apps.deploy",
		"approvers ask [apps.deploy] needs approval by group:leads: caller dave (groups ops) may not approve",
	} {
		if !strings.Contains(oneSpaced(out), want) {
			t.Errorf("explain output lacks %q:\n%s%s", want, out, stderr)
		}
	}
	_, out, _ = runCLI(t, rolloutCall, "explain", "--config", cfg, "--principal", "mallory", "-")
	if !strings.Contains(oneSpaced(out), "principals hidden [apps.deploy] only groups ops may see and call this tool (apps.deploy); caller mallory (no groups) is not one of them") {
		t.Errorf("explain as mallory:\n%s", out)
	}
}

// A caller who is not an approver cannot approve through --approve either.
func TestCheckRefusesAnApprovalByANonApprover(t *testing.T) {
	t.Parallel()
	cfg := writePrincipalConfig(t)
	code, _, stderr := runCLI(t, rolloutCall, "check", "--config", cfg, "--principal", "dave", "--group", "ops", "--approve", "once", "-")
	if code != exitError || !strings.Contains(stderr, "the caller may not approve this call") || !strings.Contains(stderr, "needs approval by group:leads") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
	code, out, stderr := runCLI(t, rolloutCall, "check", "--config", cfg, "--principal", "lena", "--group", "ops", "--group", "leads", "--approve", "once", "-")
	if code != exitAsk || !strings.Contains(out, `"decision":"ask"`) {
		t.Errorf("a lead approving: exit %d, out %s, stderr %s", code, out, stderr)
	}
}

// A group needs a principal: groups come with a caller's name.
func TestCheckRefusesAGroupWithoutAPrincipal(t *testing.T) {
	t.Parallel()
	code, _, stderr := runCLI(t, rolloutCall, "check", "--group", "ops", "-")
	if code != exitUsage || !strings.Contains(stderr, "--group needs --principal") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

// oneSpaced collapses runs of spaces, so that a test reads explain's
// columns whatever their widths.
func oneSpaced(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.Join(strings.Fields(l), " ")
	}
	return strings.Join(lines, "\n")
}

// A hook knows no principal: a tool restricted to a group is denied to
// the local agent (fail closed), an unrestricted one decides as before,
// and an ask only approvers may answer is a deny, not the agent's dialog.
func TestAHookDeniesARestrictedToolToTheLocalAgent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tools := writeTools(t, dir, `{"readOnlyHint":true,"openWorldHint":false}`)
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("[apps.fs.tools.read_text_file]\ngroups = [\"ops\"]\n[apps.fs.tools.write_file]\napprovers = [\"group:leads\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"hook", "--agent", "claude", "--state-dir", dir, "--tools", tools, "--config", cfg}
	code, out, stderr := runCLI(t, claudeEvent("read_text_file"), args...)
	if code != 0 || permission(t, out) != "deny" || !strings.Contains(out, "no caller is known here") {
		t.Errorf("restricted read: exit %d %s %s", code, out, stderr)
	}
	code, out, stderr = runCLI(t, claudeEvent("write_file"), args...)
	if code != 0 || permission(t, out) != "deny" || !strings.Contains(out, "group:leads") {
		t.Errorf("write only leads may approve: exit %d %s %s", code, out, stderr)
	}
	// Without the rules, the same events decide as they always did.
	args = []string{"hook", "--agent", "claude", "--state-dir", t.TempDir(), "--tools", tools}
	if _, out, _ := runCLI(t, claudeEvent("read_text_file"), args...); permission(t, out) != "allow" {
		t.Errorf("read without rules: %s", out)
	}
}
