package codex

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// hookMatcher keeps the hook to MCP tools, as docs/hooks.md says: Codex's
// own tools have no annotations and would be denied.
const hookMatcher = "^mcp__"

// hookCommand is the hook as docs/hooks.md installs it.
func hookCommand(config string) string {
	return "toolwarden hook --agent codex --config " + config
}

// hookSetup is Codex's config.toml for the hook front end: the filesystem
// server run directly (see wrapServer for required and the approval
// mode), and toolwarden's PreToolUse hook, not yet trusted.
func (a *agent) hookSetup(config string) string {
	return fmt.Sprintf(`[mcp_servers.fs]
command = %q
args = [%q]
required = true
default_tools_approval_mode = "approve"

[[hooks.PreToolUse]]
matcher = %q
[[hooks.PreToolUse.hooks]]
type = "command"
command = %q
`, a.fsServer, a.served, hookMatcher, hookCommand(config))
}

// syncCatalog lists the filesystem server's tools into the catalog the
// hook reads, as docs/hooks.md says to before using the hook.
func (a *agent) syncCatalog() {
	a.t.Helper()
	out, code := a.Toolwarden("tools", "sync", "--agent", "codex")
	if code != 0 || !strings.Contains(out, "ok   fs:") {
		a.t.Fatalf("toolwarden tools sync --agent codex: exit %d\n%s", code, out)
	}
}

// untrusted matches what `toolwarden validate` must say of a Codex hook
// Codex will not run.
var untrusted = regexp.MustCompile(`(?i)not trusted|untrusted|(changed|modified) since`)

// docs/hooks.md warns that Codex asks the user to trust a new hook once:
// until then `codex exec` skips it without a word, and nothing toolwarden
// would deny is stopped.
func TestCodexSkipsAnUntrustedHook(t *testing.T) {
	a := newAgent(t)
	leak := a.Served("secret/leak.txt")
	a.model.Script(
		step{Tool: "mcp__fs__write_file", Args: map[string]any{"path": leak, "content": "exfiltrated"}},
		step{Text: "done"},
	)
	a.WriteConfig(a.hookSetup(a.policyConfig()))
	a.syncCatalog()
	r := a.Exec("Save a copy under secret/.")
	if r.Err != nil {
		t.Fatalf("codex exec: %v", r.Err)
	}
	a.Offline()

	t.Run("Codex lists the hook as untrusted", func(t *testing.T) {
		hooks := a.Hooks()
		if len(hooks) != 1 || hooks[0].TrustStatus != "untrusted" || hooks[0].Command != hookCommand(a.policyConfig()) {
			t.Fatalf("Codex lists %+v, want the one toolwarden hook, untrusted", hooks)
		}
	})

	t.Run("the write toolwarden would deny happens", func(t *testing.T) {
		if !exists(leak) {
			out, _ := a.model.ResultFor(0)
			t.Fatalf("%s was not written: did the untrusted hook run after all? The model got:\n%s", leak, out)
		}
		if out, _ := a.model.ResultFor(0); !strings.Contains(out, "Successfully wrote") {
			t.Errorf("the model did not get the write's success:\n%s", out)
		}
	})

	t.Run("toolwarden validate says the hook is not trusted", func(t *testing.T) {
		out, _ := a.Toolwarden("validate", "--config", a.ConfigPath())
		if !untrusted.MatchString(out) {
			t.Errorf("toolwarden validate --config %s does not say that Codex will skip the untrusted hook:\n%s", a.ConfigPath(), out)
		}
	})
}

func TestCodexThroughATrustedHook(t *testing.T) {
	a := newAgent(t)
	token := "token-2b8e6d40"
	a.WriteServed("notes.txt", "the meeting is at noon, "+token)
	a.WriteServed("keep.txt", "stays where it is")
	leak, asked := a.Served("secret/leak.txt"), a.Served("asked")
	a.model.Script(
		step{Tool: "mcp__fs__read_text_file", Args: map[string]any{"path": a.Served("notes.txt")}},
		step{Tool: "mcp__fs__write_file", Args: map[string]any{"path": leak, "content": "exfiltrated"}},
		step{Tool: "mcp__fs__create_directory", Args: map[string]any{"path": asked}},
		step{Tool: "mcp__fs__move_file", Args: map[string]any{"source": a.Served("keep.txt"), "destination": a.Served("moved.txt")}},
		step{Text: "done"},
	)
	policy := a.policyConfig()
	a.WriteConfig(a.hookSetup(policy))
	a.syncCatalog()
	hooks := a.Hooks()

	t.Run("the trust hash is the one computed from the hook's definition", func(t *testing.T) {
		want := codexHookHash("pre_tool_use", hookMatcher, hookCommand(policy), 600)
		if len(hooks) != 1 || hooks[0].CurrentHash != want || hooks[0].Key != a.ConfigPath()+":pre_tool_use:0:0" {
			t.Fatalf("Codex lists %+v; want key %s:pre_tool_use:0:0 and hash %s (has Codex changed how it hashes hooks?)", hooks, a.ConfigPath(), want)
		}
	})
	a.TrustHooks(hooks)
	if got := a.Hooks(); len(got) != 1 || got[0].TrustStatus != "trusted" {
		t.Fatalf("after writing hooks.state, Codex lists %+v, want the hook trusted", got)
	}

	r := a.Exec("Read notes.txt, save a copy under secret/, make a folder, move keep.txt.")
	if r.Err != nil {
		t.Fatalf("codex exec: %v", r.Err)
	}
	a.Offline()
	if n := len(a.model.Requests()); n != 5 {
		t.Fatalf("the model got %d requests, want 5 (one per scripted step)", n)
	}

	t.Run("toolwarden validate does not call the trusted hook untrusted", func(t *testing.T) {
		out, code := a.Toolwarden("validate", "--config", a.ConfigPath())
		if code != 0 || untrusted.MatchString(out) {
			t.Errorf("toolwarden validate --config %s: exit %d\n%s", a.ConfigPath(), code, out)
		}
	})

	t.Run("an allowed call's result reaches the model", func(t *testing.T) {
		out, ok := a.model.ResultFor(0)
		if !ok || !strings.Contains(out, token) {
			t.Errorf("the read's result (received: %v) does not carry %q:\n%s", ok, token, out)
		}
	})

	t.Run("a denied call does not run and the model is told why and how to allow it", func(t *testing.T) {
		if exists(leak) {
			t.Errorf("%s was written: the denied call ran", leak)
		}
		out, _ := a.model.ResultFor(1)
		for _, want := range []string{"PreToolUse hook", "toolwarden: deny fs/write_file", secretReason, "argguard", leak} {
			if !strings.Contains(out, want) {
				t.Errorf("the deny the model received does not name the reason (%q):\n%s", want, out)
			}
		}
		if !strings.Contains(strings.ToLower(out), "to allow") {
			t.Errorf("the deny the model received does not say how to allow the call:\n%s", out)
		}
	})

	t.Run("an asked call does not run and the model learns no one could be asked", func(t *testing.T) {
		if exists(asked) {
			t.Errorf("%s was created: the asked call ran", asked)
		}
		out, _ := a.model.ResultFor(2)
		if strings.Contains(out, "user denied") {
			t.Errorf("the model was told the user denied a call no one was asked about:\n%s", out)
		}
		if !noOneSaw.MatchString(out) {
			t.Errorf("the model was not told that no one could be asked:\n%s", out)
		}
		for _, want := range []string{"toolwarden: ask fs/create_directory", "to allow it", `approval_mode = "approve"`} {
			if !strings.Contains(out, want) {
				t.Errorf("the model was not told how to allow the call (%q):\n%s", want, out)
			}
		}
	})

	t.Run("a hidden tool called anyway is denied", func(t *testing.T) {
		if exists(a.Served("moved.txt")) || !exists(a.Served("keep.txt")) {
			t.Errorf("keep.txt was moved: the hidden tool ran")
		}
		out, _ := a.model.ResultFor(3)
		if !strings.Contains(out, "toolwarden: deny fs/move_file") || !strings.Contains(out, "blocked_by_app_config") {
			t.Errorf("the model was not told the hidden tool is disabled:\n%s", out)
		}
	})
}

// Trust is for one exact definition: a hook edited after it was trusted
// (here given --warm, as a user following docs/hooks.md might) is skipped
// by Codex again until the user trusts it anew, and validate must say so.
func TestCodexSkipsAHookChangedAfterItWasTrusted(t *testing.T) {
	a := newAgent(t)
	a.WriteConfig(a.hookSetup(a.policyConfig()))
	a.TrustHooks(a.Hooks())
	src, err := os.ReadFile(a.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "--agent codex", "--agent codex --warm", 1)
	if err := os.WriteFile(a.ConfigPath(), []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := a.Hooks(); len(got) != 1 || got[0].TrustStatus != "modified" {
		t.Fatalf("Codex lists %+v, want the edited hook as modified (not run)", got)
	}
	out, _ := a.Toolwarden("validate", "--config", a.ConfigPath())
	if !untrusted.MatchString(out) {
		t.Errorf("toolwarden validate --config %s does not say that Codex will skip the hook changed since it was trusted:\n%s", a.ConfigPath(), out)
	}
}
