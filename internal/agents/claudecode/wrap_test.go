package claudecode

import (
	"slices"
	"strings"
	"testing"
)

// Claude Code 2.1.197 in -p mode, its MCP server behind `toolwarden wrap`.
func TestClaudeCodeThroughWrap(t *testing.T) {
	w := newWorkspace(t)
	m := newModel(t, w.script()...)
	w.userMCPServers(t, map[string]any{
		"fs": map[string]any{
			"type":    "stdio",
			"command": "toolwarden",
			"args":    []string{"wrap", "--config", w.config, "--app", "fs", "--audit", w.audit, "--", w.fsServer, w.project},
		},
	})
	// MCP tools run without Claude Code's own permission prompt, so what
	// stops a call is toolwarden alone.
	r := w.runClaude(t, m, "--allowedTools", "mcp__fs")

	t.Run("the hidden tool is not offered to the model", func(t *testing.T) {
		offered := m.toolsOffered(t)
		for _, want := range []string{"mcp__fs__read_text_file", "mcp__fs__write_file"} {
			if !slices.Contains(offered, want) {
				t.Errorf("%s not offered; offered: %v", want, offered)
			}
		}
		if slices.Contains(offered, "mcp__fs__move_file") {
			t.Errorf("the hidden move_file was offered: %v", offered)
		}
		mustNotExist(t, w.movedPath(), "the hidden move_file ran")
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
		// Claude Code -p cancels every elicitation without showing it:
		// that is no one's answer, and the model must not report to the
		// user that they refused.
		mustSayNoOneSaw(t, "asked write", got)
		mustSay(t, "asked write", got, "write_file", "to allow", `approval_mode = "approve"`)
	})

	t.Run("Claude Code shows the wrapped server's own name, not toolwarden's", func(t *testing.T) {
		want := upstreamServerInfoName(t, w.fsServer, w.project)
		if got := serverDisplayName(t, r.stdout, turnRead); got != want {
			t.Errorf("Claude Code labels the wrapped server %q, want the upstream's serverInfo.name %q", got, want)
		}
	})

	t.Run("each call is decided and audited once", func(t *testing.T) {
		got := auditCounts(t, w.audit)
		for rec, want := range map[string]int{
			"check read_text_file":   2,
			"observe read_text_file": 2,
			"check write_file":       3, // the denied writes and the asked one
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
}
