package config

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestTypoTablesLoadWithAWarningThatSaysWhatWasMeant loads every
// testdata/warn/*.toml and compares its warnings with the .warn file beside
// it. These configs load (Codex would load them too), but a table that
// neither reads does nothing, so each gets a warning with a suggestion.
func TestTypoTablesLoadWithAWarningThatSaysWhatWasMeant(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/warn/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no samples in testdata/warn")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".toml"), func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(file)
			if err != nil {
				t.Fatalf("does not load: %v", err)
			}
			var b strings.Builder
			for _, w := range cfg.Warnings {
				b.WriteString(w.String() + "\n")
			}
			got := b.String()
			golden := strings.TrimSuffix(file, ".toml") + ".warn"
			checkGolden(t, golden, got, "the warnings text")
		})
	}
}

func TestTopLevelSuggestionNamesOurTableOrNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key, want string
	}{
		{"app", "[apps.<name>]"},
		{"App", "[apps.<name>]"},
		{"policy", "[policies.<name>]"},
		{"polices", "[policies.<name>]"},
		{"mcp_server", "[mcp_servers.<name>]"},
		{"mcp-servers", "[mcp_servers.<name>]"},
		{"mcpServers", "[mcp_servers.<name>]"},
		{"servers", "[mcp_servers.<name>]"},
		{"apps_default", "[apps._default]"},
		{"apps-github", "[apps.github]"},
		{"mcp_servers_fs", "[mcp_servers.fs]"},
		{"approval_polcy", "approval_policy"},
		{"model", ""},
		{"experimental_feature", ""},
		{"x", ""},
	}
	for _, tt := range tests {
		if got := topLevelSuggestion(tt.key); got != tt.want {
			t.Errorf("topLevelSuggestion(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestCodexTopLevelKeysAreNeverTypos(t *testing.T) {
	t.Parallel()
	// Every top-level key of the full Codex sample is Codex's own.
	cfg, err := Load("testdata/codex-full.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range cfg.Warnings {
		if strings.Contains(w.Message, "read by neither toolwarden nor Codex") {
			t.Errorf("Codex key taken for a typo: %s", w)
		}
	}
}

func TestBlankLineKeepsOffsetsAndReportsProgress(t *testing.T) {
	t.Parallel()
	src := []byte("\xef\xbb\xbfa = 1\n  b = é\n\n")
	if !blankLine(src, 1) || string(src) != "\xef\xbb\xbf     \n  b = é\n\n" {
		t.Fatalf("line 1: %q", src)
	}
	if !blankLine(src, 2) || string(src) != "\xef\xbb\xbf     \n        \n\n" {
		t.Fatalf("line 2: %q", src)
	}
	if blankLine(src, 2) || blankLine(src, 3) || blankLine(src, 9) {
		t.Fatal("blanking a blank or missing line must report no progress")
	}
}
