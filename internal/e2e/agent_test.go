package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The example agent (examples/agent), built for this run, driven against
// the real npm filesystem and memory servers through the sdk guard.

var (
	agentOnce sync.Once
	agentBin  string
	agentErr  error
)

func buildAgent(t *testing.T) string {
	t.Helper()
	agentOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolwarden-agent-")
		if err != nil {
			agentErr = err
			return
		}
		agentBin = filepath.Join(dir, "agent")
		args := []string{"build", "-o", agentBin}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "./examples/agent")...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			agentErr = fmt.Errorf("building examples/agent: %v\n%s", err, out)
		}
	})
	if agentErr != nil {
		t.Fatal(agentErr)
	}
	return agentBin
}

// agentSetup is a served folder and a Codex config for the filesystem and
// memory servers, with filesystem's move_file hidden, and writes under
// secret/ denied by argguard.
type agentSetup struct {
	dir, config string
}

func newAgentSetup(t *testing.T) agentSetup {
	fs := npmServer(t, "mcp-server-filesystem")
	mem := npmServer(t, "mcp-server-memory")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("meeting at noon"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, "config.toml", fmt.Sprintf(`
[mcp_servers.fs]
command = %q
args = [%q]

[mcp_servers.memory]
command = %q
env = { MEMORY_FILE_PATH = %q }

[apps.fs.tools.move_file]
enabled = false

[policies.argguard]
builtin = "argguard"
[policies.argguard.config]
rules = [{ tool = "write_file", arg = "path", deny_glob = %q }]
`, fs, dir, mem, filepath.Join(t.TempDir(), "memory.jsonl"), filepath.Join(dir, "secret", "**")))
	return agentSetup{dir: dir, config: cfg}
}

// runAgent runs the agent over a plan and returns its output.
func runAgent(t *testing.T, s agentSetup, approve, plan string) string {
	t.Helper()
	planFile := writeFile(t, "plan.jsonl", strings.ReplaceAll(plan, "$DIR", s.dir))
	var out bytes.Buffer
	stderr := newLog(t, "agent")
	cmd := exec.CommandContext(testContext(t), buildAgent(t), "--config", s.config, "--plan", planFile, "--approve", approve)
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("agent: %v\n%s", err, out.String())
	}
	return out.String()
}

func TestExampleAgentDecidesEveryCallThroughTheGuard(t *testing.T) {
	t.Parallel()
	s := newAgentSetup(t)
	out := runAgent(t, s, "session", `
{"server":"fs","tool":"read_text_file","arguments":{"path":"$DIR/notes.txt"}}
{"server":"fs","tool":"write_file","arguments":{"path":"$DIR/a.txt","content":"A"}}
{"server":"fs","tool":"write_file","arguments":{"path":"$DIR/b.txt","content":"B"}}
{"conversation":"second","server":"fs","tool":"write_file","arguments":{"path":"$DIR/c.txt","content":"C"}}
{"server":"fs","tool":"move_file","arguments":{"source":"$DIR/a.txt","destination":"$DIR/moved.txt"}}
{"server":"memory","tool":"create_entities","arguments":{"entities":[{"name":"toolwarden","entityType":"project","observations":["guards tool calls"]}]}}
{"server":"memory","tool":"open_nodes","arguments":{"names":["toolwarden"]}}
`)
	t.Run("the tools offered leave out the hidden one", func(t *testing.T) {
		fsLine := lineWith(out, "  fs: ")
		if !strings.Contains(fsLine, "write_file") || strings.Contains(fsLine, "move_file") {
			t.Errorf("fs tools offered: %q", fsLine)
		}
		if !strings.Contains(out, "  memory: ") {
			t.Errorf("no memory tools offered:\n%s", out)
		}
	})
	t.Run("an allowed read runs", func(t *testing.T) {
		if !strings.Contains(out, "ok: meeting at noon") {
			t.Errorf("read result missing:\n%s", out)
		}
	})
	t.Run("a write is asked about once per conversation, and remembered only in it", func(t *testing.T) {
		if n := strings.Count(out, "approval asked [main] fs.write_file"); n != 1 {
			t.Errorf("asked %d times in main, want once:\n%s", n, out)
		}
		if n := strings.Count(out, "approval asked [second] fs.write_file"); n != 1 {
			t.Errorf("asked %d times in the second conversation, want once:\n%s", n, out)
		}
		for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
			if _, err := os.Stat(filepath.Join(s.dir, f)); err != nil {
				t.Errorf("%s was not written: %v", f, err)
			}
		}
	})
	t.Run("a call to the hidden tool is denied and does not run", func(t *testing.T) {
		if !strings.Contains(out, "move_file is not available") {
			t.Errorf("no refusal for move_file:\n%s", out)
		}
		if _, err := os.Stat(filepath.Join(s.dir, "moved.txt")); err == nil {
			t.Error("move_file ran")
		}
	})
	t.Run("the memory server is reached through the guard", func(t *testing.T) {
		if !strings.Contains(lineAfter(out, "memory.open_nodes"), "guards tool calls") {
			t.Errorf("memory did not keep the entity:\n%s", out)
		}
	})
}

func TestExampleAgentMakesNoDeniedCall(t *testing.T) {
	t.Parallel()
	s := newAgentSetup(t)
	if err := os.Mkdir(filepath.Join(s.dir, "secret"), 0o700); err != nil {
		t.Fatal(err)
	}
	// A policy deny is not asked about, whatever the approver would say.
	out := runAgent(t, s, "session", `{"server":"fs","tool":"write_file","arguments":{"path":"$DIR/secret/key.txt","content":"no"}}`)
	if strings.Contains(out, "approval asked") || !strings.Contains(out, "toolwarden denied this call to write_file") {
		t.Errorf("the write under secret/ was not denied by policy:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "secret", "key.txt")); err == nil {
		t.Error("the write policy denied ran")
	}

	// An ask the agent's approver denies (sdk.DenyAll: no one is asked)
	// is not made either, and the model is not told a person refused it.
	out = runAgent(t, s, "deny", `
{"server":"fs","tool":"write_file","arguments":{"path":"$DIR/denied.txt","content":"no"}}
{"server":"fs","tool":"read_text_file","arguments":{"path":"$DIR/notes.txt"}}
`)
	if !strings.Contains(out, "approval asked [main] fs.write_file") || !strings.Contains(out, "write_file needs the user's approval, but no one was asked") || strings.Contains(out, "the user denied") {
		t.Errorf("the write was not asked about and denied:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "denied.txt")); err == nil {
		t.Error("the denied write ran")
	}
	if !strings.Contains(out, "ok: meeting at noon") {
		t.Errorf("the read after the denial did not run:\n%s", out)
	}
}

func TestExampleAgentRemembersNothingAcrossRuns(t *testing.T) {
	t.Parallel()
	s := newAgentSetup(t)
	plan := `{"server":"fs","tool":"write_file","arguments":{"path":"$DIR/a.txt","content":"A"}}`
	for run := 1; run <= 2; run++ {
		out := runAgent(t, s, "session", plan)
		if n := strings.Count(out, "approval asked [main] fs.write_file"); n != 1 {
			t.Fatalf("run %d: asked %d times, want once (a session approval lasts one run):\n%s", run, n, out)
		}
	}
}

func lineWith(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// lineAfter returns the output from the line naming a call up to the next
// call.
func lineAfter(out, call string) string {
	i := strings.Index(out, call)
	if i < 0 {
		return ""
	}
	rest := out[i+len(call):]
	if j := strings.Index(rest, "\n["); j >= 0 {
		rest = rest[:j]
	}
	return rest
}
