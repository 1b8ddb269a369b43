package config

import "testing"

func TestEditDistanceCountsTranspositionsAsOneEdit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"enabled", "enabled", 0},
		{"enabeld", "enabled", 1}, // swap
		{"destructive_enable", "destructive_enabled", 1},
		{"kitten", "sitting", 3},
		{"prmopt", "prompt", 1},
		{"ca", "abc", 3}, // optimal string alignment, not full Damerau
		{"héllo", "hello", 1},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestSuggestFindsWhatTheUserMeant(t *testing.T) {
	t.Parallel()
	keys := []string{"enabled", "destructive_enabled", "open_world_enabled", "default_tools_enabled",
		"default_tools_approval_mode", "approvals_reviewer", "tools", "links", "read_only", "trust", "hints"}
	tests := []struct {
		word, want string
	}{
		{"destructive_enable", "destructive_enabled"},
		{"enable", "enabled"},
		{"Enabled", "enabled"},
		{"readonly", "read_only"},
		{"read-only", "read_only"},
		{"ReadOnly", "read_only"},
		{"tool", "tools"},
		{"approval_reviewer", "approvals_reviewer"},
		{"default_tools_approval", "default_tools_approval_mode"},
		{"hint", "hints"},
		{"model", ""},
		{"x", ""},
		{"completely_unrelated_key", ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.word, keys); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
	if got := suggest("read_only_hint", hintNames()); got != "readOnlyHint" {
		t.Errorf("snake_case hint spelled camelCase: got %q", got)
	}
}
