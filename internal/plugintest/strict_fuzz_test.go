package plugintest

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Parse never panics, accepts only valid JSON, and when the key check finds
// a key it gives a position inside the file and a line that holds the key.
func FuzzParseCaseFile(f *testing.F) {
	paths, _ := filepath.Glob("../../pdk/testdata/conformance/*.json")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{"cases":[{"name":"x","event":"check","expect":{"decison":"deny"}}]}`,
		`{"cases":[{"name":"x","steps":[{"event":"check","call":{"argument":{}}}]}]}`,
		`{"cases":[{"name":"x","event":"check","expand":{"A":{"repeat":"b","times":2,"times":3}}}]}`,
		"{\"cases\":[\n\t{\"name\":\"\u00e9\",\"evnt\":1}]}",
		`{"plugin":{"name":"p"}} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := Parse("f.json", b)
		if err == nil {
			if !json.Valid(b) {
				t.Fatalf("accepted invalid JSON %q", b)
			}
			if file == nil {
				t.Fatal("nil file without an error")
			}
			return
		}
		var ke *KeyError
		if errors.As(err, &ke) {
			if ke.Line < 1 || ke.Col < 1 {
				t.Fatalf("position %d:%d for %q", ke.Line, ke.Col, b)
			}
			if !json.Valid(b) {
				t.Fatalf("a key error for invalid JSON %q", b)
			}
		}
	})
}
