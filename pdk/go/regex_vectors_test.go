package pdk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// regexCase is one case of pdk/testdata/regex.json.
type regexCase struct {
	Pattern string `json:"pattern"`
	Input   string `json:"input"`
	Match   bool   `json:"match"`
	Error   bool   `json:"error"`
}

// TestRegexVectorsAgreeWithGo holds the shared regex vectors, which the
// Rust, C and AssemblyScript kits' engines must pass, to Go's regexp: a Go
// plugin uses regexp itself, so the vectors say what Go says.
func TestRegexVectorsAgreeWithGo(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "regex.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []regexCase }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("regex.json: %v", err)
	}
	if len(f.Cases) < 100 {
		t.Fatalf("only %d cases", len(f.Cases))
	}
	for _, c := range f.Cases {
		re, err := regexp.Compile(c.Pattern)
		switch {
		case c.Error && err == nil:
			t.Errorf("regexp.Compile(%q) succeeds; the vector says it is refused", c.Pattern)
		case !c.Error && err != nil:
			t.Errorf("regexp.Compile(%q): %v", c.Pattern, err)
		case !c.Error && re.MatchString(c.Input) != c.Match:
			t.Errorf("regexp %q on %q: Go says %v, the vector %v", c.Pattern, c.Input, !c.Match, c.Match)
		}
	}
}
