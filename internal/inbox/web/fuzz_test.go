package web

import (
	"os"
	"path/filepath"
	"testing"
)

// Any audit log yields decisions with a server, a tool and a verdict, or
// skips lines; never a panic.
func FuzzReadTail(f *testing.F) {
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","event":"check","session":"s","decision":{"decision":"ask","server":"fs","tool":"t","reasons":[{"message":"why"}]}}` + "\n"))
	f.Add([]byte(`{"time":"2026-01-01T00:00:00Z","event":"approve","decision":{"server":"fs","tool":"t"},"scope":"always"}` + "\n{torn"))
	f.Add([]byte("\n\n\x00\xff"))
	file := filepath.Join(f.TempDir(), "audit.jsonl")
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		got := readTail(file)
		for _, d := range got.Decisions {
			if d.Server == "" || d.Tool == "" || d.Decision == "" || d.Time.IsZero() {
				t.Fatalf("an incomplete decision: %+v", d)
			}
		}
	})
}
