package gemini

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestGeminiThroughWrapSeesOnlyWhatToolwardenAllows(t *testing.T) {
	w := newWorld(t)
	m := newModel(t, script(w)...)
	w.settings(t, map[string]any{
		server: map[string]any{
			// toolwarden by name: the agent finds it on PATH, as a user's would.
			"command": "toolwarden",
			"args":    []string{"wrap", "--config", w.config, "--app", server, "--", w.fsServer, w.dir},
		},
	}, nil)
	stdout, _ := w.run(t, m, "Read notes.txt, then try the writes.")
	if !strings.Contains(stdout, "done") {
		t.Errorf("the run did not reach the script's final answer; stdout:\n%s", stdout)
	}

	t.Run("the hidden tool is not offered to the model", func(t *testing.T) {
		offered := m.offered()
		if len(offered) == 0 || !slices.Contains(offered[0], fn("read_text_file")) || !slices.Contains(offered[0], fn("write_file")) {
			t.Fatalf("the wrapped server's tools were not offered: %q", offered)
		}
		for i, names := range offered {
			if slices.Contains(names, fn("move_file")) {
				t.Errorf("request %d offered move_file, which is disabled: %q", i, names)
			}
		}
	})

	t.Run("an allowed read's result reaches the model", func(t *testing.T) {
		got, ok := m.toolResult(fn("read_text_file"))
		if !ok {
			t.Fatal("the model received no result for read_text_file")
		}
		mustContain(t, "read_text_file's result", got, token)
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
}
