package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/BurntSushi/toml"
)

// FuzzLoad feeds arbitrary bytes to the loader. It must never panic, every
// failure must be a *LoadError whose diagnostics all carry a line and
// column, and on any document the decoder accepts the key locator must find
// every key.
//
// The seeds are whole config files, and Go minimizes every new interesting
// input for up to a minute by default, during which no progress shows; run
// it with a short minimize time:
//
//	go test -fuzz FuzzLoad -fuzztime 30s -fuzzminimizetime 2s ./internal/config/
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.toml")
	bad, _ := filepath.Glob("testdata/bad/*.toml")
	for _, file := range append(append(files, bad...), "default.toml") {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("a = [[1], [{b = 2}]]\n[[x.y]]\n[x.y.z]\n'q' = \"\"\"\n\"\"\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := LoadBytes("f.toml", data)
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) || len(le.Diagnostics) == 0 {
				t.Fatalf("error %T without diagnostics: %v", err, err)
			}
			for _, d := range le.Diagnostics {
				if d.Pos.File != "f.toml" || d.Pos.Line < 1 || d.Pos.Col < 1 {
					t.Fatalf("diagnostic without a position: %q", d.Error())
				}
			}
		} else if cfg == nil {
			t.Fatal("nil config without error")
		}
		var raw map[string]any
		if _, err := toml.Decode(string(data), &raw); err == nil {
			if missing := unlocated(raw, locateKeys("f.toml", data)); len(missing) > 0 {
				t.Fatalf("keys without a position: %q", missing)
			}
		}
	})
}
