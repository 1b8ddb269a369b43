package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// newcomer is a fresh home for the real binary, as a new user's: its own
// HOME and config folder, and a system config folder of its own (empty)
// so that the machine's /etc/toolwarden plays no part.
type newcomer struct {
	t                  *testing.T
	env                []string
	home, project, sys string
}

func newNewcomer(t *testing.T) *newcomer {
	t.Helper()
	binaries(t)
	env := isolated(t, "/usr/bin:/bin")
	n := &newcomer{t: t, env: env}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			n.home = v
		}
	}
	n.project = filepath.Join(n.home, "project")
	n.sys = filepath.Join(n.home, "etc-toolwarden")
	for _, d := range []string{n.project, n.sys} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	n.env = append(n.env, config.SystemConfigDirEnv+"="+n.sys)
	return n
}

// userConfig is where init writes: XDG_CONFIG_HOME/toolwarden/config.toml.
func (n *newcomer) userConfig() string {
	for _, kv := range n.env {
		if v, ok := strings.CutPrefix(kv, "XDG_CONFIG_HOME="); ok {
			return filepath.Join(v, "toolwarden", "config.toml")
		}
	}
	n.t.Fatal("no XDG_CONFIG_HOME")
	return ""
}

func (n *newcomer) run(stdin string, args ...string) ran {
	n.t.Helper()
	return runBin(n.t, n.env, stdin, built.tw, args...)
}

func (n *newcomer) init() {
	n.t.Helper()
	if r := n.run("", "init", "--project", n.project); r.code != exitOK {
		n.t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// readmeHookCommand is the Claude Code hook command the README gives,
// word for word.
func readmeHookCommand(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`"PreToolUse".*"command": "(toolwarden hook [^"]*)"`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the README has no Claude Code PreToolUse hook line")
	}
	return strings.Fields(string(m[1]))
}

// Trap 1 of issue #23: after init, the README's Claude Code hook line,
// given no --config, decides by the config init wrote: a write to
// ~/.ssh/authorized_keys is denied by its argguard rule, not asked as the
// embedded default would.
func TestInitThenTheReadmeHookLineDeniesAWriteToAuthorizedKeys(t *testing.T) {
	t.Parallel()
	n := newNewcomer(t)
	n.init()
	hookLine := readmeHookCommand(t)
	if hookLine[0] != "toolwarden" || strings.Contains(strings.Join(hookLine, " "), "--config") {
		t.Fatalf("the README's hook line is %q: this test is about a line without --config", hookLine)
	}
	key := filepath.Join(n.home, ".ssh", "authorized_keys")
	ev, _ := json.Marshal(map[string]any{
		"session_id": "s1", "transcript_path": filepath.Join(n.home, "t.jsonl"), "cwd": n.project,
		"permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "mcp__fs__write_file",
		"tool_input": map[string]any{"path": key, "content": "ssh-ed25519 AAAA attacker"},
	})
	r := n.run(string(ev), hookLine[1:]...)
	var answer struct {
		Out struct {
			Decision string `json:"permissionDecision"`
			Reason   string `json:"permissionDecisionReason"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &answer); err != nil {
		t.Fatalf("hook answer is not JSON (exit %d): %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if answer.Out.Decision != "deny" || !strings.Contains(answer.Out.Reason, "writes under ~/.ssh are denied") {
		t.Fatalf("write to %s: %q (%s), want deny by the argguard rule init wrote\nstderr: %s", key, answer.Out.Decision, answer.Out.Reason, r.stderr)
	}
}

// validate with no arguments, right after init, says which files are in
// force (the one init wrote, and the system file it looked for) and
// counts the policies of the one it loaded.
func TestValidateAfterInitNamesTheFileAndCountsItsPolicies(t *testing.T) {
	t.Parallel()
	n := newNewcomer(t)
	n.init()
	r := n.run("", "validate")
	for _, want := range []string{
		"  system        " + filepath.Join(n.sys, "config.toml") + " (not present)\n",
		"  user          " + n.userConfig() + "\n",
		"ok: 1 file(s), 0 apps, 0 servers, 2 policies\n",
	} {
		if r.code != exitOK || !strings.Contains(r.stdout, want) {
			t.Fatalf("validate: exit %d, want %q in\n%s%s", r.code, want, r.stdout, r.stderr)
		}
	}
}

// Without --config the system file is read under the user file, and a
// --config replaces both: a command line names exactly what is in force.
func TestConfigDiscoveryLayersTheUserFileOverTheSystemFileAndConfigReplacesBoth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sys, home := filepath.Join(dir, "sys"), filepath.Join(dir, "home")
	writeTestFile(t, filepath.Join(sys, "config.toml"), "approval_policy = \"never\"\n[apps.fs]\ndestructive_enabled = false\n")
	writeTestFile(t, filepath.Join(home, ".config", "toolwarden", "config.toml"), "[apps.fs]\ndestructive_enabled = true\n[apps.docs]\nenabled = false\n")
	other := filepath.Join(dir, "other.toml")
	writeTestFile(t, other, "[apps.git]\nenabled = false\n")
	vars := map[string]string{"HOME": home, config.SystemConfigDirEnv: sys}
	write := `{"server":"fs","tool":{"name":"write_file","annotations":{"destructiveHint":true}},"arguments":{"path":"/tmp/x"}}`
	docs := `{"server":"docs","tool":{"name":"search","annotations":{"readOnlyHint":true}},"arguments":{}}`

	// The user's destructive_enabled = true beats the system's false, and
	// the system's approval_policy = "never" (which the user leaves
	// alone) turns the ask into a deny; the user's docs rule counts.
	code, out, stderr := runCLIEnv(t, vars, write+docs, "check")
	ds := decisions(t, out)
	if code != exitDeny || len(ds) != 2 || ds[0]["decision"] != "deny" || ds[0]["hidden"] == true || ds[1]["hidden"] != true {
		t.Fatalf("system + user: exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, `"approval_policy"`) || !strings.Contains(out, "never") {
		t.Fatalf("the deny is not the system file's approval_policy = never:\n%s", out)
	}
	// --config other.toml: neither discovered file is read.
	code, out, stderr = runCLIEnv(t, vars, write+docs, "check", "--config", other)
	ds = decisions(t, out)
	if code != exitAsk || len(ds) != 2 || ds[0]["decision"] != "ask" || ds[1]["decision"] != "allow" {
		t.Fatalf("--config replaces discovery: exit %d\n%s%s", code, out, stderr)
	}
	// validate lists both files and counts what they merge to.
	code, out, _ = runCLIEnv(t, vars, "", "validate")
	if code != exitOK || !strings.Contains(out, "  system        "+filepath.Join(sys, "config.toml")+"\n") || !strings.Contains(out, "ok: 2 file(s), 2 apps, 0 servers, 0 policies\n") {
		t.Fatalf("validate: exit %d\n%s", code, out)
	}
}

// A user file that does not load is an error for every command, never a
// silent fall back to the embedded default: the hook blocks the call.
func TestABrokenUserConfigBlocksTheHookRatherThanFallingBackToTheDefault(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeTestFile(t, filepath.Join(home, ".config", "toolwarden", "config.toml"), "[apps.fs\n")
	vars := map[string]string{"HOME": home, config.SystemConfigDirEnv: filepath.Join(home, "nosys")}
	ev := `{"session_id":"c1","hook_event_name":"PreToolUse","tool_name":"mcp__fs__read_file","tool_input":{"path":"/tmp/x"}}`
	code, out, stderr := runCLIEnv(t, vars, ev, "hook", "--agent", "claude", "--state-dir", filepath.Join(home, "state"), "--approvals", filepath.Join(home, "a.json"))
	if code != exitBlock || !strings.Contains(stderr, filepath.Join(home, ".config", "toolwarden", "config.toml")+":1:") || !strings.Contains(stderr, "call blocked") {
		t.Fatalf("exit %d, want %d naming the broken file\nstdout: %s\nstderr: %s", code, exitBlock, out, stderr)
	}
}

// wrap, given no --config, serves under the user's file too (its
// [apps.*] rules hide a tool), and a --config replaces it.
func TestWrapWithoutConfigReadsTheUserFileAndConfigReplacesIt(t *testing.T) {
	t.Parallel()
	n := newNewcomer(t)
	writeTestFile(t, n.userConfig(), "[apps.t.tools.echo]\nenabled = false\n")
	empty := filepath.Join(t.TempDir(), "empty.toml")
	writeTestFile(t, empty, "")
	for _, c := range []struct {
		name   string
		config []string
		listed bool
	}{
		{"the user file hides echo", nil, false},
		{"--config replaces the user file", []string{"--config", empty}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{"wrap", "--app", "t", "--approvals", filepath.Join(t.TempDir(), "a.json")}, c.config...), "--", built.testsrv)
			tools := listThroughWrap(t, n.env, args...)
			if got := strings.Contains(tools, `"name":"echo"`); got != c.listed {
				t.Fatalf("echo listed: %v, want %v\n%s", got, c.listed, tools)
			}
		})
	}
}

// listThroughWrap starts toolwarden with args, initializes a session and
// returns the tools/list response line.
func listThroughWrap(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(built.tw, args...)
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	for lines.Scan() {
		if strings.Contains(lines.Text(), `"id":2`) {
			return lines.Text()
		}
	}
	t.Fatalf("no tools/list answer: %v\nstderr: %s", lines.Err(), stderr.String())
	return ""
}

// A running wrap given no --config watches the user file it found: an
// edit of the file init wrote applies without a restart.
func TestWrapWithoutConfigAppliesAnEditOfTheUserFileLive(t *testing.T) {
	t.Parallel()
	n := newNewcomer(t)
	writeTestFile(t, n.userConfig(), "# nothing hidden yet\n")
	cmd := exec.Command(built.tw, "wrap", "--app", "t", "--approvals", filepath.Join(t.TempDir(), "a.json"), "--", built.testsrv)
	cmd.Env = n.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	lines.Buffer(nil, 1<<20)
	id := 0
	ask := func(method, params string) string {
		t.Helper()
		id++
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		want := fmt.Sprintf(`"id":%d`, id)
		for lines.Scan() {
			if strings.Contains(lines.Text(), want) {
				return lines.Text()
			}
		}
		t.Fatalf("no answer to %s: %v\nstderr: %s", method, lines.Err(), stderr.String())
		return ""
	}
	ask("initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if l := ask("tools/list", "{}"); !strings.Contains(l, `"name":"echo"`) {
		t.Fatalf("echo is not listed before the edit: %s", l)
	}
	writeTestFile(t, n.userConfig(), "[apps.t.tools.echo]\nenabled = false\n")
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(stderr.String(), "config reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("the edit of %s was not applied\nstderr: %s", n.userConfig(), stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if l := ask("tools/list", "{}"); strings.Contains(l, `"name":"echo"`) {
		t.Fatalf("echo is still listed after the edit hid it: %s", l)
	}
}
