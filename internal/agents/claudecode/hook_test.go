package claudecode

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Claude Code 2.1.197 in -p mode running the filesystem server itself,
// with `toolwarden hook` as its PreToolUse and PostToolUse hooks, set up
// as docs/hooks.md says: once with the MCP tools allowed in Claude Code
// (its own prompt out of the way), once with all of Claude Code's
// permission checks bypassed, as many run it, where the hook is all that
// stands between the model and the tools.
func TestClaudeCodeThroughTheHook(t *testing.T) {
	for _, perm := range []struct {
		name string
		args []string
		env  []string
	}{
		{"with the MCP tools allowed", []string{"--allowedTools", "mcp__fs"}, nil},
		// Claude Code refuses to skip its checks as root unless told it
		// runs in a sandbox.
		{"with Claude Code's permission checks bypassed", []string{"--dangerously-skip-permissions"}, []string{"IS_SANDBOX=1"}},
	} {
		t.Run(perm.name, func(t *testing.T) {
			w := newWorkspace(t)
			w.extraEnv = perm.env
			m := newModel(t, w.script()...)
			w.installHook(t)
			r := w.runClaude(t, m, perm.args...)
			checkHookRun(t, w, m, r)
		})
	}
}

// installHook configures the filesystem server where Claude Code and
// `toolwarden tools sync` read it, lists its tools into the catalog, and
// installs the hook in the project's .claude/settings.json.
func (w *workspace) installHook(t *testing.T) {
	t.Helper()
	w.userMCPServers(t, map[string]any{
		"fs": map[string]any{"type": "stdio", "command": w.fsServer, "args": []string{w.project}},
	})
	w.toolsSync(t)
	hook := fmt.Sprintf("toolwarden hook --agent claude --config %s --audit %s", w.config, w.audit)
	entry := []any{map[string]any{"matcher": "mcp__.*", "hooks": []any{map[string]any{"type": "command", "command": hook}}}}
	writeJSON(t, filepath.Join(w.project, ".claude", "settings.json"), map[string]any{
		"hooks": map[string]any{"PreToolUse": entry, "PostToolUse": entry},
	})
}

func checkHookRun(t *testing.T, w *workspace, m *model, r result) {
	t.Run("the hidden tool, called anyway, is denied and does not run", func(t *testing.T) {
		if !slices.Contains(m.toolsOffered(t), "mcp__fs__move_file") {
			t.Fatalf("Claude Code did not offer move_file, so the hook is not tested on it: %v", m.toolsOffered(t))
		}
		mustNotExist(t, w.movedPath(), "the hidden move_file ran")
		got, _ := m.toolResult(t, turnHiddenMove, 0)
		mustSay(t, "hidden move", got, "move_file", "blocked_by_app_config")
	})

	t.Run("an allowed read's result reaches the model", func(t *testing.T) {
		got, isErr := m.toolResult(t, turnRead, 0)
		if isErr || !strings.Contains(got, w.token) {
			t.Errorf("the read's result (is_error %v) lacks the file's token %q:\n%s", isErr, w.token, got)
		}
	})

	t.Run("a denied write does not run and the model is told why and how to allow it", func(t *testing.T) {
		mustNotExist(t, w.deniedPath(), "the write argguard denies ran")
		got, isErr := m.toolResult(t, turnDeniedWrite, 0)
		if !isErr {
			t.Errorf("the denied call's result is not an error")
		}
		mustSay(t, "denied write", got, "secret/ is off limits to agents", "argguard", "to allow")
	})

	t.Run("an asked write does not run and the model is told no one saw the prompt and how to allow it", func(t *testing.T) {
		mustNotExist(t, w.askedPath(), "the asked write ran without an approval")
		got, isErr := m.toolResult(t, turnAskedWrite, 0)
		if !isErr {
			t.Errorf("the asked call's result is not an error")
		}
		mustSayNoOneSaw(t, "asked write", got)
		mustSay(t, "asked write", got, "write_file", "to allow", `approval_mode = "approve"`)
	})

	t.Run("with PostToolUse installed, one call gives exactly one check record", func(t *testing.T) {
		got := auditCounts(t, w.audit)
		for rec, want := range map[string]int{
			// The observe record proves PostToolUse ran the hook after the
			// read; it must not decide the call a second time.
			"observe read_text_file": 2,
			"check read_text_file":   2,
			"check write_file":       3, // refused before they ran: no PostToolUse
			"check move_file":        1,
		} {
			if got[rec] != want {
				t.Errorf("%d %q records, want %d (all: %v)", got[rec], rec, want, got)
			}
		}
	})

	t.Run("calls made side by side are each decided on their own", func(t *testing.T) {
		checkParallel(t, w, m)
	})

	t.Run("Claude Code reaches nothing but the scripted model", func(t *testing.T) {
		mustReachOnlyTheModel(t, m)
	})

	t.Run("Claude Code shows the server's own name", func(t *testing.T) {
		want := upstreamServerInfoName(t, w.fsServer, w.project)
		if got := serverDisplayName(t, r.stdout, turnRead); got != want {
			t.Errorf("Claude Code labels the server %q, want its serverInfo.name %q", got, want)
		}
	})
}

// toolsSync runs `toolwarden tools sync --agent claude` in the project,
// as docs/hooks.md says, so the hook decides with the real definitions.
func (w *workspace) toolsSync(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "toolwarden"), "tools", "sync", "--agent", "claude")
	cmd.Dir = w.project
	cmd.Env = w.env("http://127.0.0.1:1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("toolwarden tools sync --agent claude: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "write_file") {
		t.Fatalf("toolwarden tools sync did not list the filesystem server's tools:\n%s", out)
	}
}
