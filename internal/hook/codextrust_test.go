package hook_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/hook"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// codexHome writes a Codex home (config.toml, hooks.json) and a trusted
// project with a .codex/config.toml of its own, with hooks in every shape
// the trust hash depends on: matchers present, absent and "*", timeouts
// default, 0 and set, async, statusMessage, additionalContextLimit,
// commandWindows, quotes and non-ASCII in the command, two groups of one
// event and two hooks in one group.
func codexHome(t *testing.T) (home, project string) {
	t.Helper()
	home, project = t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	user := filepath.Join(home, ".codex", "config.toml")
	writeFile(t, user, `model = "gpt-5-codex"

[[hooks.PreToolUse]]
matcher = "^mcp__"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "toolwarden hook --agent codex --config ~/.codex/config.toml"

[[hooks.PreToolUse]]
matcher = "*"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "echo a"
async = true
additionalContextLimit = 5
[[hooks.PreToolUse.hooks]]
type = "command"
command = "echo b"
commandWindows = "echo w"
timeout = 30

[[hooks.PostToolUse]]
[[hooks.PostToolUse.hooks]]
type = "command"
command = "toolwarden hook --agent codex \"quoted\" <&> é \t ✓"
timeout = 0
statusMessage = "checking"

[projects.`+fmt.Sprintf("%q", project)+`]
trust_level = "trusted"
`)
	writeFile(t, filepath.Join(home, ".codex", "hooks.json"), `{"hooks":{"PreToolUse":[{"matcher":"^mcp__fs__","hooks":[{"type":"command","command":"toolwarden hook --warm --agent codex","timeoutSec":12,"statusMessage":null}]}]}}`)
	writeFile(t, filepath.Join(project, ".codex", "config.toml"), `[[hooks.PreToolUse]]
matcher = "^mcp__"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "toolwarden hook --agent codex"
`)
	return home, project
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// codexListedHook is an entry of the Codex app server's hooks/list.
type codexListedHook struct {
	Key         string `json:"key"`
	Command     string `json:"command"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
	Enabled     bool   `json:"enabled"`
}

// codexHooksList asks the installed Codex (scripts/setup.sh) which hooks
// it would run for project, as its /hooks view does: offline, through its
// app server's hooks/list.
func codexHooksList(t *testing.T, home, project string) []codexListedHook {
	t.Helper()
	bin := testkit.NPMBin(t, "codex")
	cmd := exec.Command(bin, "app-server")
	cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"))
	cmd.Dir = project
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	fmt.Fprintf(in, "%s\n%s\n", `{"id":1,"method":"initialize","params":{"clientInfo":{"name":"toolwarden-test","version":"1"}}}`, `{"method":"initialized"}`)
	req, _ := json.Marshal(map[string]any{"id": 2, "method": "hooks/list", "params": map[string]any{"cwds": []string{project}}})
	fmt.Fprintf(in, "%s\n", req)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<22)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("codex app-server ended before answering hooks/list")
			}
			var resp struct {
				ID     int `json:"id"`
				Result struct {
					Data []struct {
						Hooks    []codexListedHook `json:"hooks"`
						Warnings []string          `json:"warnings"`
					} `json:"data"`
				} `json:"result"`
				Error json.RawMessage `json:"error"`
			}
			if json.Unmarshal([]byte(line), &resp) != nil || resp.ID != 2 {
				continue
			}
			if len(resp.Error) > 0 || len(resp.Result.Data) != 1 {
				t.Fatalf("hooks/list: %s", line)
			}
			return resp.Result.Data[0].Hooks
		case <-timeout:
			io.WriteString(in, "\n")
			t.Fatal("codex app-server did not answer hooks/list within 60s")
		}
	}
}

func codexStatus(h *hook.CodexHook) string {
	switch {
	case h.Trusted():
		return "trusted"
	case h.Modified():
		return "modified"
	}
	return "untrusted"
}

// toolwarden reads Codex's hooks, their keys, trust hashes and trust as
// the installed Codex does: for every hook of a user config.toml, a
// hooks.json and a trusted project's config, CodexHooks gives the key and
// hash Codex's hooks/list gives, and the same trust status, first with no
// trust recorded, then with one hook trusted (by the hash Codex computed),
// one trusted before it changed, and one disabled.
func TestCodexHookTrustIsComputedAsCodexComputesIt(t *testing.T) {
	t.Parallel()
	home, project := codexHome(t)
	listed := codexHooksList(t, home, project)
	if len(listed) != 6 {
		t.Fatalf("Codex lists %d hooks, want 6: %+v", len(listed), listed)
	}
	compareCodexHooks(t, home, project, listed)

	// Trust the first as Codex records it, mark the second as trusted
	// under an old hash, disable the third.
	state := fmt.Sprintf("\n[hooks.state.%q]\ntrusted_hash = %q\n\n[hooks.state.%q]\ntrusted_hash = \"sha256:0000\"\n\n[hooks.state.%q]\nenabled = false\n",
		listed[0].Key, listed[0].CurrentHash, listed[1].Key, listed[2].Key)
	rewriteCodexState(t, home, state)
	listed2 := codexHooksList(t, home, project)
	statuses := map[string]int{}
	for _, h := range listed2 {
		statuses[h.TrustStatus]++
	}
	if statuses["trusted"] != 1 || statuses["modified"] != 1 {
		t.Fatalf("Codex's statuses %v after recording trust, want one trusted and one modified: %+v", statuses, listed2)
	}
	compareCodexHooks(t, home, project, listed2)
}

func rewriteCodexState(t *testing.T, home, state string) {
	t.Helper()
	user := filepath.Join(home, ".codex", "config.toml")
	data, err := os.ReadFile(user)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, user, string(data)+state)
}

func compareCodexHooks(t *testing.T, home, project string, listed []codexListedHook) {
	t.Helper()
	mine, errs := hook.Places{Home: home, Project: project, Getenv: func(string) string { return "" }}.CodexHooks()
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	byKey := map[string]hook.CodexHook{}
	for _, h := range mine {
		byKey[h.Key] = h
	}
	if len(byKey) != len(listed) {
		t.Errorf("toolwarden finds %d hooks, Codex lists %d", len(byKey), len(listed))
	}
	for _, l := range listed {
		h, ok := byKey[l.Key]
		if !ok {
			t.Errorf("Codex lists %s (%q), toolwarden does not find it", l.Key, l.Command)
			continue
		}
		if h.Hash != l.CurrentHash {
			t.Errorf("%s: toolwarden's hash %s, Codex's %s", l.Key, h.Hash, l.CurrentHash)
		}
		if got := codexStatus(&h); got != l.TrustStatus {
			t.Errorf("%s: toolwarden says %s, Codex %s", l.Key, got, l.TrustStatus)
		}
		if h.Disabled == l.Enabled {
			t.Errorf("%s: toolwarden says disabled=%v, Codex enabled=%v", l.Key, h.Disabled, l.Enabled)
		}
	}
}
