package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The attacker here controls a user or project layer (the agent's MCP
// config, a toolwarden config) but not the admin's requirements file, and
// tries to run code the admin's server allow-lists never admitted: a fake
// toolwarden, wrap arguments read one way by the hook and another by
// wrap, a proxy held to other requirements, a variable that loads code,
// a relative command run from a directory of the attacker's choosing.

// fsPackage is the allow-listed server: npx running the official
// filesystem server, as an admin would write it.
const fsAllowed = "[[allowed_servers]]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\"]\n"

// allowListAnswer is what the real binary answered a hook event: the decision
// (Claude Code's or Gemini CLI's form) and its reason.
type allowListAnswer struct {
	decision, reason, stderr string
}

// runHookAs writes the agent's MCP config (file, relative to a fresh home)
// and sends one event for fs/read_text_file to the real binary's hook
// under the requirements file reqs ("": none by flag). env adds to the
// hook's environment (the agent's own).
func runHookAs(t *testing.T, agent, configFile, config, reqs string, env ...string) allowListAnswer {
	t.Helper()
	dir := t.TempDir()
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	for _, d := range []string{home, project} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(home, configFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(tools, []byte(`{"fs":[{"name":"read_text_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	event := `{"session_id":"adv1","hook_event_name":"PreToolUse","cwd":` + jsonQuote(project) + `,"tool_name":"mcp__fs__read_text_file","tool_input":{"path":"/tmp/x"}}`
	switch agent {
	case "gemini":
		event = `{"session_id":"adv1","transcript_path":"/tmp/chat.json","cwd":` + jsonQuote(project) + `,"hook_event_name":"BeforeTool","timestamp":"2026-11-28T06:00:00.000Z","tool_name":"mcp_fs_read_text_file","tool_input":{"path":"/tmp/x"}}`
	case "codex":
		event = `{"session_id":"adv1","transcript_path":"/tmp/rollout.jsonl","cwd":` + jsonQuote(project) + `,"hook_event_name":"PreToolUse","model":"gpt-5-codex","permission_mode":"default","tool_name":"mcp__fs__read_text_file","tool_input":{"path":"/tmp/x"},"tool_use_id":"call_1"}`
	}
	args := []string{"hook", "--agent", agent, "--state-dir", filepath.Join(dir, "state"), "--tools", tools}
	if reqs != "" {
		args = append(args, "--requirements", reqs)
	}
	cmd := exec.Command(twBin, args...)
	cmd.Env = append(append(os.Environ(), "HOME="+home, "TOOLWARDEN_CATALOG=off"), env...)
	cmd.Stdin = strings.NewReader(event)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook: %v\nstdout %s\nstderr %s", err, out.String(), errb.String())
	}
	if agent == "codex" && out.Len() == 0 {
		return allowListAnswer{decision: "allow", stderr: errb.String()} // Codex's allow is no answer
	}
	var v struct {
		Decision, Reason   string
		HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string }
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("hook output %q: %v", out.String(), err)
	}
	a := allowListAnswer{decision: v.Decision, reason: v.Reason, stderr: errb.String()}
	if a.decision == "" {
		a.decision, a.reason = v.HookSpecificOutput.PermissionDecision, v.HookSpecificOutput.PermissionDecisionReason
	}
	return a
}

// claudeServer is ~/.claude.json with one user-scope server fs.
func claudeServer(t *testing.T, command string, args []string, env map[string]string) string {
	t.Helper()
	entry := map[string]any{"command": command, "args": args}
	if env != nil {
		entry["env"] = env
	}
	b, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"fs": entry}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fakeToolwarden writes an executable script named toolwarden into a new
// folder and returns the folder: what an attacker's repository ships.
func fakeToolwarden(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "toolwarden"), []byte("#!/bin/sh\necho pwned > /tmp/pwned\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// In hook mode, through the real binary: a server the agent runs through
// toolwarden is admitted only when the command is this very toolwarden
// (by file, symlinks followed, never by name), wrap's arguments are read
// by wrap's own parser, and a proxy only when it loads the same
// requirements; the variables the agent's config sets are judged too.
func TestHookAllowListsJudgeTheServerTheAgentReallyRuns(t *testing.T) {
	t.Parallel()
	reqs := writeFile(t, "requirements.toml", fsAllowed)
	other := writeFile(t, "other-requirements.toml", "max_trust = \"full\"\n")
	fake := fakeToolwarden(t)
	link := filepath.Join(t.TempDir(), "tw")
	if err := os.Symlink(twBin, link); err != nil {
		t.Fatal(err)
	}
	npx := []string{"npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv"}
	wrap := func(pre ...string) []string {
		return append(append([]string{"wrap"}, pre...), append([]string{"--"}, npx...)...)
	}
	cases := []struct {
		name    string
		command string
		args    []string
		env     map[string]string
		hookEnv []string // the agent's own environment
		want    string   // the decision
		because string   // in the reason
	}{
		{name: "the real toolwarden wrapping the admitted server is decided as usual", command: twBin, args: wrap(), want: "allow"},
		{name: "the real toolwarden through a symlink is still itself", command: link, args: wrap(), want: "allow"},
		{name: "the real toolwarden found on the agent's PATH is itself", command: "toolwarden", args: wrap(), hookEnv: []string{"PATH=" + filepath.Dir(twBin) + ":" + os.Getenv("PATH")}, want: "allow"},
		{name: "a fake toolwarden script in another folder is judged as itself", command: filepath.Join(fake, "toolwarden"), args: wrap(), want: "deny",
			because: `server "fs" (` + filepath.Join(fake, "toolwarden") + `) is not in allowed_servers`},
		{name: "a fake toolwarden first on the agent's PATH is judged as itself", command: "toolwarden", args: wrap(), hookEnv: []string{"PATH=" + fake + ":" + filepath.Dir(twBin) + ":" + os.Getenv("PATH")}, want: "deny",
			because: `server "fs" (toolwarden) is not in allowed_servers`},
		{name: "a PATH the agent's config sets to reach a fake toolwarden is refused", command: "toolwarden", args: wrap(), env: map[string]string{"PATH": fake + ":" + filepath.Dir(twBin)}, want: "deny",
			because: `is not in allowed_servers`},
		{name: "wrap is judged by the command wrap runs, not by what follows a later --", command: twBin, args: append([]string{"wrap", "python3", "evil.py", "--"}, npx...), want: "deny",
			because: `server "fs" (python3) is not in allowed_servers`},
		{name: "wrap arguments wrap refuses are refused", command: twBin, args: wrap("--no-such-flag"), want: "deny",
			because: "runs toolwarden wrap with arguments wrap does not run a server with"},
		{name: "a proxy with any config but other requirements is refused", command: twBin, args: []string{"proxy", "--config", "/tmp/any.toml"}, want: "deny",
			because: "is not held to the same server allow-lists"},
		{name: "a proxy given more requirements files is refused", command: twBin, args: []string{"proxy", "--requirements", reqs, "--requirements", other}, want: "deny",
			because: "is not held to the same server allow-lists"},
		{name: "a proxy whose env names another requirements file is refused", command: twBin, args: []string{"proxy", "--requirements", reqs}, env: map[string]string{"TOOLWARDEN_REQUIREMENTS": other}, want: "deny",
			because: "is not held to the same server allow-lists"},
		{name: "a proxy loading the hook's very requirements is admitted", command: twBin, args: []string{"proxy", "--config", "/tmp/any.toml", "--requirements", reqs}, want: "allow"},
		{name: "a proxy with NODE_OPTIONS is refused", command: twBin, args: []string{"proxy", "--requirements", reqs}, env: map[string]string{"NODE_OPTIONS": "--require /tmp/evil.js"}, want: "deny",
			because: "runs toolwarden proxy with env NODE_OPTIONS set"},
		{name: "NODE_OPTIONS in the admitted server's env is refused", command: npx[0], args: npx[1:], env: map[string]string{"NODE_OPTIONS": "--require /tmp/evil.js"}, want: "deny",
			because: "env sets NODE_OPTIONS, which can make the server run other code"},
		{name: "LD_PRELOAD in the admitted server's env is refused", command: npx[0], args: npx[1:], env: map[string]string{"LD_PRELOAD": "/tmp/evil.so"}, want: "deny",
			because: "env sets LD_PRELOAD"},
		{name: "NODE_OPTIONS in a wrapped server's env is refused", command: twBin, args: wrap(), env: map[string]string{"NODE_OPTIONS": "--require /tmp/evil.js"}, want: "deny",
			because: "env sets NODE_OPTIONS"},
		{name: "an ordinary variable in the admitted server's env is admitted", command: npx[0], args: npx[1:], env: map[string]string{"DEBUG": "1"}, want: "allow"},
		{name: "a variable the agent already has, repeated by its config, is admitted", command: npx[0], args: npx[1:], env: map[string]string{"NODE_OPTIONS": "--max-old-space-size=512"},
			hookEnv: []string{"NODE_OPTIONS=--max-old-space-size=512"}, want: "allow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := runHookAs(t, "claude", ".claude.json", claudeServer(t, tc.command, tc.args, tc.env), reqs, tc.hookEnv...)
			if a.decision != tc.want || !strings.Contains(a.reason, tc.because) {
				t.Fatalf("decision %s (%s), want %s because %q\nstderr %s", a.decision, a.reason, tc.want, tc.because, a.stderr)
			}
			if tc.want == "deny" && !strings.Contains(a.reason, "required by "+reqs) {
				t.Errorf("the reason does not name the requirements file: %s", a.reason)
			}
		})
	}
}

// A relative command runs whatever file of that name its directory holds.
// In hook mode, through the real binary, with Gemini CLI's cwd key: an
// entry that admits ./server only from /srv/fs-like directory refuses the
// same command run from the attacker's folder, and admits it from its own.
func TestHookAllowListsRefuseARelativeCommandFromTheAttackersDirectory(t *testing.T) {
	t.Parallel()
	trusted, evil := t.TempDir(), t.TempDir()
	reqs := writeFile(t, "requirements.toml", "[mcp_servers.fs]\ncommand = \"./server\"\ncwd = { match = \"exact\", value = "+quoteTOML(trusted)+" }\n")
	for _, tc := range []struct{ cwd, want, because string }{
		{evil, "deny", `cwd "` + evil + `" does not match the required exact "` + trusted + `"`},
		{trusted, "allow", ""},
	} {
		settings := `{"mcpServers":{"fs":{"command":"./server","cwd":` + jsonQuote(tc.cwd) + `}}}`
		a := runHookAs(t, "gemini", filepath.Join(".gemini", "settings.json"), settings, reqs)
		if a.decision != tc.want || !strings.Contains(a.reason, tc.because) {
			t.Fatalf("cwd %s: decision %s (%s), want %s because %q\nstderr %s", tc.cwd, a.decision, a.reason, tc.want, tc.because, a.stderr)
		}
	}
	// Without cwd in the requirement, no relative command is admitted: the
	// requirements file does not load, and the hook blocks the call.
	bad := writeFile(t, "bad.toml", "[[allowed_servers]]\ncommand = \"./server\"\n")
	code, stdout, stderr := runTWStatus(t, "", "validate", "--requirements", bad)
	if code == 0 || !strings.Contains(stdout+stderr, `command "./server" is relative`) {
		t.Fatalf("a relative command without cwd: exit %d, %s %s", code, stdout, stderr)
	}
}

// A proxy with any config is bound when it loads the hook's requirements
// the way the hook does: here through $TOOLWARDEN_REQUIREMENTS in the
// agent's environment, which Claude Code passes to its servers and Codex
// does not (unless env_vars names it), so under Codex the same proxy
// would run without them and is refused.
func TestHookAdmitsAProxyOnlyWhenItInheritsTheHooksRequirements(t *testing.T) {
	t.Parallel()
	reqs := writeFile(t, "requirements.toml", fsAllowed)
	agentEnv := "TOOLWARDEN_REQUIREMENTS=" + reqs
	a := runHookAs(t, "claude", ".claude.json", claudeServer(t, twBin, []string{"proxy", "--config", "/tmp/any.toml"}, nil), "", agentEnv)
	if a.decision != "allow" {
		t.Fatalf("Claude Code, inherited requirements: %s (%s)\n%s", a.decision, a.reason, a.stderr)
	}
	proxy := "[mcp_servers.fs]\ncommand = " + quoteTOML(twBin) + "\nargs = [\"proxy\", \"--config\", \"/tmp/any.toml\"]\n"
	a = runHookAs(t, "codex", filepath.Join(".codex", "config.toml"), proxy, "", agentEnv)
	if a.decision != "deny" || !strings.Contains(a.reason, "would load the requirements [] instead of this hook's ["+reqs+"]") {
		t.Fatalf("Codex, requirements not passed on: %s (%s)\n%s", a.decision, a.reason, a.stderr)
	}
	a = runHookAs(t, "codex", filepath.Join(".codex", "config.toml"), proxy+"env_vars = [\"TOOLWARDEN_REQUIREMENTS\"]\n", "", agentEnv)
	if a.decision != "allow" {
		t.Fatalf("Codex, requirements passed on by env_vars: %s (%s)\n%s", a.decision, a.reason, a.stderr)
	}
}

// The same through Codex's own config.toml (~/.codex/config.toml), whose
// servers may set env and cwd: NODE_OPTIONS in env, and a relative
// command run from the attacker's folder, are refused; the plain server
// is decided as usual.
func TestHookAllowListsJudgeCodexServersEnvAndDirectory(t *testing.T) {
	t.Parallel()
	trusted, evil := t.TempDir(), t.TempDir()
	reqs := writeFile(t, "requirements.toml", fsAllowed+"\n[[allowed_servers]]\ncommand = \"./server\"\ncwd = { match = \"exact\", value = "+quoteTOML(trusted)+" }\n")
	const npx = "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv\"]\n"
	for _, tc := range []struct{ name, config, want, because string }{
		{"the admitted server", npx, "allow", ""},
		{"NODE_OPTIONS in its env", npx + "env = { NODE_OPTIONS = \"--require /tmp/evil.js\" }\n", "deny", "env sets NODE_OPTIONS"},
		{"a relative command from the attacker's folder", "[mcp_servers.fs]\ncommand = \"./server\"\ncwd = " + quoteTOML(evil) + "\n", "deny", `cwd "` + evil + `" does not match`},
		{"a relative command from the named folder", "[mcp_servers.fs]\ncommand = \"./server\"\ncwd = " + quoteTOML(trusted) + "\n", "allow", ""},
	} {
		a := runHookAs(t, "codex", filepath.Join(".codex", "config.toml"), tc.config, reqs)
		if a.decision != tc.want || !strings.Contains(a.reason, tc.because) {
			t.Fatalf("%s: decision %s (%s), want %s because %q\nstderr %s", tc.name, a.decision, a.reason, tc.want, tc.because, a.stderr)
		}
	}
}

// evilScript writes a Node.js file that, once loaded, leaves a marker
// file, and returns both paths: if the marker exists, the attack ran.
func evilScript(t *testing.T) (script, marker string) {
	t.Helper()
	dir := t.TempDir()
	script, marker = filepath.Join(dir, "evil.js"), filepath.Join(dir, "pwned")
	if err := os.WriteFile(script, []byte("require('fs').writeFileSync("+jsonQuote(marker)+", 'pwned');\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return script, marker
}

func noMarker(t *testing.T, marker string) {
	t.Helper()
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the code NODE_OPTIONS loads ran (%s exists: %v)", marker, err)
	}
}

// Through the real `toolwarden wrap`: an admitted command started with
// NODE_OPTIONS = --require evil.js (set by the agent's config for the
// server, so wrap inherits it) is refused before it starts, and the code
// never runs; a requirement that names the variable's value admits it.
func TestWrapRefusesAnAdmittedServerWhoseEnvironmentLoadsCode(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	script, marker := evilScript(t)
	dir := t.TempDir()
	reqs := writeFile(t, "requirements.toml", "[[allowed_servers]]\ncommand = "+quoteTOML(fsBin)+"\n")
	cmd := exec.Command(twBin, append([]string{"wrap", "--requirements", reqs}, wrapArgs(t, "fs", nil, fsBin, dir)[1:]...)...)
	cmd.Env = append(os.Environ(), "NODE_OPTIONS=--require "+script)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil || !strings.Contains(errb.String(), "refusing to start the server") || !strings.Contains(errb.String(), "env sets NODE_OPTIONS") ||
		!strings.Contains(errb.String(), "required by "+reqs) {
		t.Fatalf("wrap with NODE_OPTIONS: %v\nstdout %s\nstderr %s", err, out.String(), errb.String())
	}
	noMarker(t, marker)

	named := writeFile(t, "named.toml", "[[allowed_servers]]\ncommand = "+quoteTOML(fsBin)+"\nenv = { NODE_OPTIONS = { match = \"exact\", value = \"--max-old-space-size=256\" } }\n")
	args := append([]string{"wrap", "--requirements", named}, wrapArgs(t, "fs", nil, fsBin, dir)[1:]...)
	res := runTSClientEnv(t, append(os.Environ(), "NODE_OPTIONS=--max-old-space-size=256"), twBin, args...)
	if len(res.Results) != 1 || !contains(res.Results[0].Tools, "list_directory") {
		t.Fatalf("the value the requirement names: %+v", res.Results)
	}
}

// runTSClientEnv lists the tools of command through the official
// TypeScript client, spawned with environ.
func runTSClientEnv(t *testing.T, environ []string, command string, args ...string) tsResult {
	t.Helper()
	env := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "TOOLWARDEN_CATALOG": os.Getenv("TOOLWARDEN_CATALOG")}
	for _, kv := range environ {
		if k, v, _ := strings.Cut(kv, "="); k == "NODE_OPTIONS" {
			env[k] = v
		}
	}
	return runTSFrom(t, nodeSDK(t), "", os.Environ(), map[string]any{"command": command, "args": args, "steps": []tsStep{{Op: "list"}}, "env": env})
}

// Through the real `toolwarden proxy`: a configured server that an
// allow-list admits by command, with NODE_OPTIONS = --require evil.js in
// its [mcp_servers.*].env, is disabled (its tools are not served, its
// code never runs) while an admitted neighbour is served; env_vars cannot
// pass the variable through either.
func TestProxyRefusesAnAdmittedServerWhoseEnvLoadsCode(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	script, marker := evilScript(t)
	dir := t.TempDir()
	reqs := writeFile(t, "requirements.toml", "[[allowed_servers]]\ncommand = "+quoteTOML(fsBin)+"\n\n[[allowed_servers]]\ncommand = "+quoteTOML(testServer)+"\n")
	cfg := writeFile(t, "config.toml", "[mcp_servers.fs]\ncommand = "+quoteTOML(fsBin)+"\nargs = ["+quoteTOML(dir)+"]\nenv = { NODE_OPTIONS = "+quoteTOML("--require "+script)+" }\n\n"+
		"[mcp_servers.fs2]\ncommand = "+quoteTOML(fsBin)+"\nargs = ["+quoteTOML(dir)+"]\nenv_vars = [\"NODE_OPTIONS\"]\n\n"+
		"[mcp_servers.ts]\ncommand = "+quoteTOML(testServer)+"\nargs = [\"-state\", "+quoteTOML(t.TempDir())+"]\n")
	args := []string{"proxy", "--config", cfg, "--requirements", reqs, "--approvals", filepath.Join(t.TempDir(), "a.json")}
	environ := append(os.Environ(), "NODE_OPTIONS=--require "+script)
	res := runTSClientEnv(t, environ, twBin, args...)
	if len(res.Results) != 1 || len(res.Results[0].Tools) == 0 {
		t.Fatalf("the proxy served nothing: %+v", res.Results)
	}
	for _, tool := range res.Results[0].Tools {
		if strings.HasPrefix(tool, "fs__") || strings.HasPrefix(tool, "fs2__") {
			t.Fatalf("a server whose env loads code is served: %v", res.Results[0].Tools)
		}
	}
	noMarker(t, marker)

	code, stdout, stderr := runTWStatus(t, "", "validate", "--config", cfg, "--requirements", reqs)
	for _, want := range []string{"env sets NODE_OPTIONS", "env_vars passes NODE_OPTIONS"} {
		if !strings.Contains(stdout+stderr, want) {
			t.Errorf("validate (exit %d) does not say %q:\n%s%s", code, want, stdout, stderr)
		}
	}
}
