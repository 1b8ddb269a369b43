package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/internal/audit"
)

// freshHome is a new user's home with nothing in it, and the environment
// an agent gives the processes it starts (HOME and PATH, no XDG_*).
func freshHome(t *testing.T) (home string, env []string) {
	t.Helper()
	home = t.TempDir()
	return home, []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
}

// defaultLog is where a fresh home's audit log is.
func defaultLog(home string) string {
	return filepath.Join(home, ".local", "state", "toolwarden", "audit.jsonl")
}

// runTW runs the real binary with env and stdin, and returns its exit
// code, stdout and stderr.
func runTW(t *testing.T, env []string, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(built.tw, args...)
	cmd.Env, cmd.Dir = env, t.TempDir()
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// auditEvents reads the events of the log at path (and its rotated files).
func auditEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for i := 100; i >= 0; i-- {
		p := path
		if i > 0 {
			p = audit.Rotated(path, i)
		}
		b, err := os.ReadFile(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for line := range bytes.Lines(b) {
			var r map[string]any
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("%s: a line that is not one whole record (%v): %q", p, err, line)
			}
			out = append(out, r)
		}
	}
	return out
}

const hookWriteEvent = `{"session_id":"s1","hook_event_name":"PreToolUse","tool_name":"mcp__fs__write_file","tool_input":{"path":"/tmp/x","content":"x"},"cwd":"/tmp"}`

// From a fresh home and with no flag, the hook's decision is in the audit
// log at the one default place; [audit] enabled = false and --audit off
// turn it off; [audit] path moves it.
func TestTheHookAuditsToTheDefaultPlaceWithNoFlags(t *testing.T) {
	t.Parallel()
	binaries(t)
	home, env := freshHome(t)
	if code, out, errb := runTW(t, env, hookWriteEvent, "hook", "--agent", "claude"); code != 0 || !strings.Contains(out, `"permissionDecision"`) {
		t.Fatalf("hook: %d %s %s", code, out, errb)
	}
	events := auditEvents(t, defaultLog(home))
	if len(events) != 1 || events[0]["event"] != "check" || events[0]["session"] != "s1" {
		t.Fatalf("the default log holds %v; want the hook's check", events)
	}

	off := auditTestFile(t, "off.toml", "[audit]\nenabled = false\n")
	for _, args := range [][]string{{"--config", off}, {"--audit", "off"}} {
		home, env := freshHome(t)
		runTW(t, env, hookWriteEvent, append([]string{"hook", "--agent", "claude"}, args...)...)
		if _, err := os.Stat(defaultLog(home)); !os.IsNotExist(err) {
			t.Errorf("hook %v wrote the audit log (%v)", args, err)
		}
	}

	moved := filepath.Join(t.TempDir(), "moved.jsonl")
	cfg := auditTestFile(t, "moved.toml", fmt.Sprintf("[audit]\npath = %q\n", moved))
	home, env = freshHome(t)
	runTW(t, env, hookWriteEvent, "hook", "--agent", "claude", "--config", cfg)
	if n := len(auditEvents(t, moved)); n != 1 {
		t.Errorf("[audit] path: %d records there; want 1", n)
	}
	if _, err := os.Stat(defaultLog(home)); !os.IsNotExist(err) {
		t.Errorf("[audit] path set, yet the default log was written (%v)", err)
	}
}

// A default log that cannot be written (its directory is a file) does not
// stop the decision: the hook answers and says why nothing was logged.
// A log the user named that cannot be written blocks, as any bad flag.
func TestAnUnwritableDefaultLogWarnsAndStillDecides(t *testing.T) {
	t.Parallel()
	binaries(t)
	home, env := freshHome(t)
	os.MkdirAll(filepath.Join(home, ".local"), 0o700)
	os.WriteFile(filepath.Join(home, ".local", "state"), []byte("not a directory"), 0o600)
	code, out, errb := runTW(t, env, hookWriteEvent, "hook", "--agent", "claude")
	if code != 0 || !strings.Contains(out, `"permissionDecision":"ask"`) || !strings.Contains(errb, "no audit log") {
		t.Fatalf("hook with an unwritable default log: %d %s %s", code, out, errb)
	}
	code, _, errb = runTW(t, env, hookWriteEvent, "hook", "--agent", "claude", "--audit", filepath.Join(home, ".local", "state", "x.jsonl"))
	if code != exitBlock || !strings.Contains(errb, "audit log") {
		t.Errorf("hook with an unwritable --audit: %d %s", code, errb)
	}
}

// Revoking from the command line is recorded in the default log, one
// record per approval revoked, and a reset as one record for all.
func TestApprovalsRevokeAndResetAreAudited(t *testing.T) {
	t.Parallel()
	binaries(t)
	home, env := freshHome(t)
	hash := strings.Repeat("ab", 32)
	for _, tool := range []string{"write_file", "move_file"} {
		if code, _, errb := runTW(t, env, "", "approvals", "add", "--server", "fs", "--tool", tool, "--hash", hash); code != 0 {
			t.Fatalf("approvals add: %s", errb)
		}
	}
	if code, _, errb := runTW(t, env, "", "approvals", "revoke", "--tool", "write_file"); code != 0 {
		t.Fatalf("approvals revoke: %s", errb)
	}
	if code, _, errb := runTW(t, env, "", "approvals", "reset"); code != 0 {
		t.Fatalf("approvals reset: %s", errb)
	}
	events := auditEvents(t, defaultLog(home))
	if len(events) != 2 {
		t.Fatalf("the log holds %v; want the revoke and the reset", events)
	}
	one, _ := events[0]["decision"].(map[string]any)
	all, _ := events[1]["decision"].(map[string]any)
	if events[0]["event"] != "revoke" || one["server"] != "fs" || one["tool"] != "write_file" || one["definition_hash"] != hash || one["by"] != "cli" {
		t.Errorf("revoke record %v", events[0])
	}
	if events[1]["event"] != "revoke" || all["all"] != true || !strings.HasSuffix(fmt.Sprint(all["file"]), "approvals.json") {
		t.Errorf("reset record %v", events[1])
	}
}

// Several real toolwarden processes append to one log at once while it
// rotates every 20 KiB: every decision is in exactly one file, whole;
// each rotated file had reached the bound (none rotated twice).
func TestConcurrentProcessesShareOneRotatingAuditLog(t *testing.T) {
	t.Parallel()
	binaries(t)
	dir := t.TempDir()
	log := filepath.Join(dir, "audit.jsonl")
	cfg := auditTestFile(t, "rotate.toml", "[audit]\nmax_size_mib = 0.02\nkeep = 100\n")
	const procs, calls = 6, 120
	var wg sync.WaitGroup
	for p := range procs {
		var in strings.Builder
		for c := range calls {
			fmt.Fprintf(&in, `{"session":"p%d","server":"fs","tool":{"name":"t%d","inputSchema":{"type":"object"}},"arguments":{}}`+"\n", p, c)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, env := freshHome(t)
			if code, _, errb := runTW(t, env, in.String(), "check", "--config", cfg, "--audit", log); code == 1 || code == 2 {
				t.Errorf("check %d: exit %d: %s", p, code, errb)
			}
		}()
	}
	wg.Wait()
	seen := map[string]int{}
	for _, r := range auditEvents(t, log) {
		if r["event"] == "check" {
			d, _ := r["decision"].(map[string]any)
			seen[fmt.Sprint(r["session"], "/", d["tool"])]++
		}
	}
	for p := range procs {
		for c := range calls {
			if k := fmt.Sprintf("p%d/t%d", p, c); seen[k] != 1 {
				t.Errorf("%s is in the log %d times; want once", k, seen[k])
			}
		}
	}
	rotations := 0
	for i := 1; ; i++ {
		fi, err := os.Stat(audit.Rotated(log, i))
		if err != nil {
			break
		}
		rotations++
		if limit := int64(20971); fi.Size() < limit { // 0.02 MiB
			t.Errorf("%s holds %d bytes, under the %d it is rotated at: rotated twice", audit.Rotated(log, i), fi.Size(), limit)
		}
	}
	if rotations < 5 {
		t.Errorf("%d rotations; the log should have rotated many times", rotations)
	}
	t.Logf("%d processes x %d decisions, %d rotations", procs, calls, rotations)
}

func auditTestFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A hook that cannot ask (Gemini CLI under the default channel) denies
// the call, and the log says so after the check: the inbox's row is a
// deny, not an ask left open.
func TestAHookThatCannotAskLogsTheDenial(t *testing.T) {
	t.Parallel()
	binaries(t)
	home, env := freshHome(t)
	event := `{"session_id":"g1","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"rm -rf build"},"cwd":"/tmp"}`
	if _, out, _ := runTW(t, env, event, "hook", "--agent", "gemini"); !strings.Contains(out, `"decision":"deny"`) {
		t.Fatalf("gemini hook: %s", out)
	}
	events := auditEvents(t, defaultLog(home))
	if len(events) != 2 || events[0]["event"] != "check" || events[1]["event"] != "channel" {
		t.Fatalf("the log holds %v; want the check, then the channel's refusal", events)
	}
	if a, _ := events[1]["decision"].(map[string]any); a["channel"] != audit.ChannelAgent || a["outcome"] != "refused" || a["tool"] != "run_shell_command" {
		t.Errorf("channel record %v", a)
	}
}
