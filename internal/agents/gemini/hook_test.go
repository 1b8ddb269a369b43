package gemini

import (
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGeminiHookDecidesEveryMCPCall(t *testing.T) {
	w := newWorld(t)
	// Through the hook Gemini CLI offers every tool; the model calls the
	// hidden one anyway.
	m := newModel(t, script(w, turn{Call: fn("move_file"), Args: map[string]any{
		"source": filepath.Join(w.dir, "old.txt"), "destination": filepath.Join(w.dir, "moved.txt"),
	}})...)
	w.hookSettings(t, w.config)
	w.syncCatalog(t)

	stdout, _ := w.run(t, m, "Read notes.txt, then try the writes.")
	if !strings.Contains(stdout, "done") {
		t.Errorf("the run did not reach the script's final answer; stdout:\n%s", stdout)
	}
	recs := w.auditRecords(t)
	checks := func(tool string) []auditRecord {
		var out []auditRecord
		for _, r := range recs {
			if r.Event == "check" && r.Decision.Tool == tool {
				out = append(out, r)
			}
		}
		return out
	}

	t.Run("Gemini CLI's session id keys the hook's session", func(t *testing.T) {
		// Without it every run would share the "default" session, and what
		// one conversation saw (labels, approvals) would follow the next.
		ids := map[string]bool{}
		for _, r := range recs {
			ids[r.Session] = true
		}
		if len(ids) != 1 || ids["default"] || ids[""] {
			t.Fatalf("want every record in one session Gemini CLI named, got sessions %v", ids)
		}
		for id := range ids {
			if !exists(filepath.Join(w.state, id+".json")) {
				t.Errorf("no session file for %s under the state dir", id)
			}
		}
	})

	t.Run("an allowed read's result reaches the model through the hook", func(t *testing.T) {
		got, ok := m.toolResult(fn("read_text_file"))
		if !ok {
			t.Fatal("the model received no result for read_text_file")
		}
		mustContain(t, "read_text_file's result", got, token)
		c := checks("read_text_file")
		if len(c) == 0 || c[0].Decision.Decision != "allow" || c[0].Decision.Server != server {
			t.Errorf("the hook did not allow %s/read_text_file: %+v", server, c)
		}
	})

	t.Run("with AfterTool installed one call gives exactly one check record", func(t *testing.T) {
		for _, tool := range []string{"read_text_file", "write_file", "create_directory", "move_file"} {
			if c := checks(tool); len(c) != 1 {
				t.Errorf("%s: %d check records, want 1: %+v", tool, len(c), c)
			}
		}
		// The observe record proves AfterTool ran the hook after the read;
		// the calls refused before they ran have no AfterTool.
		observed := map[string]int{}
		for _, r := range recs {
			if r.Event == "observe" {
				observed[r.Decision.Tool]++
			}
		}
		if want := map[string]int{"read_text_file": 1}; !maps.Equal(observed, want) {
			t.Errorf("observe records per tool: %v, want %v", observed, want)
		}
	})

	t.Run("the hook decides on the server and tool Gemini CLI names mcp_work_fs_write_file", func(t *testing.T) {
		c := checks("write_file")
		if len(c) != 1 {
			t.Fatalf("want one check of %s/write_file, got %+v (all records: %+v)", server, c, recs)
		}
		d := c[0].Decision
		if d.Server != server || d.Decision != "deny" || len(d.Reasons) == 0 || d.Reasons[0].Code != "arg_denied" {
			t.Errorf("want %s/write_file denied by argguard (arg_denied), got %+v", server, d)
		}
	})

	t.Run("a denied write does not run and the model is told why and how to allow it", func(t *testing.T) {
		if exists(filepath.Join(w.dir, "protected", "owned.txt")) {
			t.Error("the denied write ran: protected/owned.txt exists")
		}
		got, ok := m.toolResult(fn("write_file"))
		if !ok {
			t.Fatal("the model received no result for write_file")
		}
		mustContain(t, "write_file's result", got, protectedReason, "argguard", "to allow")
	})

	t.Run("an asked call does not run and the model is told no one saw the prompt and how to allow it", func(t *testing.T) {
		if exists(filepath.Join(w.dir, "asked")) {
			t.Error("the asked call ran: asked/ exists")
		}
		got, ok := m.toolResult(fn("create_directory"))
		if !ok {
			t.Fatal("the model received no result for create_directory")
		}
		if !saysNoOneWasAsked(got) {
			t.Errorf("create_directory's result does not say that no one saw the approval prompt:\n%s", got)
		}
		if claimsARefusal(got) {
			t.Errorf("create_directory's result says a person refused, but no one was asked:\n%s", got)
		}
		mustContain(t, "create_directory's result", got, "create_directory", "approval", "to allow", `approval_mode = "approve"`)
	})

	t.Run("a hidden tool called anyway is denied", func(t *testing.T) {
		// Without wrap nothing filters the list: the model was offered the
		// tool the config hides, so only the hook stands in the way.
		if offered := m.offered(); len(offered) == 0 || !slices.Contains(offered[0], fn("move_file")) {
			t.Errorf("Gemini CLI did not offer move_file to the model: %q", offered)
		}
		if exists(filepath.Join(w.dir, "moved.txt")) || !exists(filepath.Join(w.dir, "old.txt")) {
			t.Error("the hidden move_file ran")
		}
		got, ok := m.toolResult(fn("move_file"))
		if !ok {
			t.Fatal("the model received no result for move_file")
		}
		mustContain(t, "move_file's result", got, "disabled")
	})
}

// hookSettings runs the filesystem server directly and installs
// toolwarden's hook, deciding with config, for BeforeTool and AfterTool, as
// docs/hooks.md says (plus the test's own catalog, state and audit).
func (w *world) hookSettings(t *testing.T, config string) {
	t.Helper()
	hook := "toolwarden hook --agent gemini --config " + shellQuote(config) + " --catalog " + shellQuote(w.catalog) +
		" --state-dir " + shellQuote(w.state) + " --audit " + shellQuote(w.audit)
	entry := []any{map[string]any{"matcher": "mcp_.*", "hooks": []any{map[string]any{"type": "command", "command": hook}}}}
	w.settings(t, map[string]any{
		server: map[string]any{"command": w.fsServer, "args": []string{w.dir}},
	}, map[string]any{"BeforeTool": entry, "AfterTool": entry})
}

// syncCatalog lists the servers in Gemini CLI's settings into the tool
// catalog, as docs/hooks.md says, so the hook knows their annotations.
func (w *world) syncCatalog(t *testing.T) {
	t.Helper()
	sync := exec.Command(filepath.Join(binDir, "toolwarden"), "tools", "sync", "--agent", "gemini")
	sync.Dir = w.dir
	sync.Env = w.env(nil)
	if out, err := sync.CombinedOutput(); err != nil {
		t.Fatalf("toolwarden tools sync --agent gemini: %v\n%s", err, out)
	}
}

// shellQuote quotes a path for the shell Gemini CLI runs hook commands in.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Gemini CLI runs a tool whose BeforeTool hook fails with any exit status
// but 2 (a warning, not a block), so a hook that cannot decide must exit 2
// for the call not to run.
func TestGeminiHookThatCannotDecideBlocksTheCall(t *testing.T) {
	w := newWorld(t)
	m := newModel(t, turn{Call: fn("read_text_file"), Args: map[string]any{"path": filepath.Join(w.dir, "notes.txt")}}, turn{Text: "done"})
	missing := filepath.Join(filepath.Dir(w.config), "missing.toml")
	w.hookSettings(t, missing)
	w.syncCatalog(t)
	w.run(t, m, "Read notes.txt.")

	got, ok := m.toolResult(fn("read_text_file"))
	if !ok {
		t.Fatal("the model received no result for read_text_file")
	}
	if strings.Contains(got, token) {
		t.Errorf("the call ran although the hook could not read its config:\n%s", got)
	}
	mustContain(t, "read_text_file's result", got, missing)
}

// Gemini CLI's AfterTool event carries the result as {llmContent,
// returnDisplay, error}; the hook must hand that text to observe plugins,
// or a session that has seen a secret could send it out unasked.
func TestGeminiAfterToolFeedsTheSecretsPlugin(t *testing.T) {
	w := newWorld(t)
	// Built here, not written out whole, so the source holds no
	// token-shaped string for scanners to flag.
	secret := "ghp_" + strings.Repeat("Q7x2Kp", 6)
	write(t, filepath.Join(w.dir, "credentials.txt"), "github = "+secret+"\n")
	w.addConfig(t, fmt.Sprintf(`
[policies.secrets]
builtin = "secrets"

# write_file stands in for a tool that can send data out, approved:
# only what the session has seen can stop it.
[apps.%s.tools.write_file]
hints = { can_exfiltrate = true }
approval_mode = "approve"
`, server))
	m := newModel(t,
		turn{Call: fn("read_text_file"), Args: map[string]any{"path": filepath.Join(w.dir, "credentials.txt")}},
		turn{Call: fn("write_file"), Args: map[string]any{"path": filepath.Join(w.dir, "outbox.txt"), "content": "hello"}},
		turn{Text: "done"})
	w.hookSettings(t, w.config)
	w.syncCatalog(t)
	w.run(t, m, "Read credentials.txt, then write outbox.txt.")

	if got, _ := m.toolResult(fn("read_text_file")); !strings.Contains(got, secret) {
		t.Fatalf("the read did not reach the model, so nothing was seen:\n%s", got)
	}
	var labels []string
	for _, r := range w.auditRecords(t) {
		if r.Event == "observe" && r.Decision.Tool == "read_text_file" {
			labels = append(labels, r.Labels...)
		}
	}
	if !slices.Contains(labels, "secret_seen") {
		t.Errorf("observing the read added labels %q, want secret_seen", labels)
	}
	if exists(filepath.Join(w.dir, "outbox.txt")) {
		t.Error("the session saw a secret, yet a tool that can send data out ran unasked")
	}
	got, ok := m.toolResult(fn("write_file"))
	if !ok {
		t.Fatal("the model received no result for write_file")
	}
	mustContain(t, "write_file's result", got, "GitHub token", "to allow")
	if strings.Contains(got, secret) {
		t.Errorf("the reason repeats the secret:\n%s", got)
	}
}
