package pdk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// wordCase is one case of pdk/testdata/shellwords.json.
type wordCase struct {
	Line  string   `json:"line"`
	Words []string `json:"words"`
	Error bool     `json:"error"`
}

func loadWordCases(t testing.TB) []wordCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "shellwords.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []wordCase }
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("shellwords.json: %v", err)
	}
	return f.Cases
}

// TestSplitWordsVectors holds the Go kit to the shared vectors, which the
// other kits' splitters are held to as well.
func TestSplitWordsVectors(t *testing.T) {
	cases := loadWordCases(t)
	if len(cases) < 50 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		got, err := SplitWords(c.Line)
		switch {
		case c.Error && err == nil:
			t.Errorf("SplitWords(%q) = %q, want an error", c.Line, got)
		case !c.Error && err != nil:
			t.Errorf("SplitWords(%q): %v, want %q", c.Line, err, c.Words)
		case !c.Error && !reflect.DeepEqual(got, c.Words):
			t.Errorf("SplitWords(%q) = %q, want %q", c.Line, got, c.Words)
		}
	}
}

// FuzzSplitWords checks what holds for every line: a split line never
// yields an operator a shell would act on unquoted, and quoting each word
// back with single quotes splits into the same words.
func FuzzSplitWords(f *testing.F) {
	for _, c := range loadWordCases(f) {
		f.Add(c.Line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := SplitWords(line)
		if err != nil {
			return
		}
		var again string
		for i, w := range words {
			if i > 0 {
				again += " "
			}
			again += "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		back, err := SplitWords(again)
		if err != nil || !reflect.DeepEqual(back, words) {
			t.Fatalf("SplitWords(%q) = %q; requoted %q splits to %q, %v", line, words, again, back, err)
		}
	})
}
