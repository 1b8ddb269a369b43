package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden .err files in testdata/bad")

// TestMalformedConfigsReportExactErrors loads every testdata/bad/*.toml and
// compares the error text with the .err file beside it: the file:line:col,
// key path and wording a user sees. Run with -update to rewrite them after
// a deliberate change, then review the diff.
func TestMalformedConfigsReportExactErrors(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/bad/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("only %d malformed samples", len(files))
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".toml"), func(t *testing.T) {
			t.Parallel()
			cfg, err := Load(file)
			if err == nil {
				t.Fatalf("loaded without error: %+v", cfg)
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("error is %T, want *LoadError: %v", err, err)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(file, ".toml") + ".err"
			checkGolden(t, golden, got, "the error text")
		})
	}
}

// checkGolden compares got, the what of a test config, with the golden
// file, or rewrites the file with -update.
func checkGolden(t *testing.T, golden, got, what string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s\n--- got\n%s--- want\n%s", what, golden, got, want)
	}
}
