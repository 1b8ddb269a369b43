package inbox

import (
	"os"
	"path/filepath"
	"testing"
)

// Any bytes in an ask file are either a valid ask or skipped with a
// reason; never a panic, never an ask that fails validation.
func FuzzAskFile(f *testing.F) {
	f.Add([]byte(`{"id":"00000000000000000000000000000000","tool":"t","options":[{"id":"deny"}],"expires":"2100-01-01T00:00:00Z","pid":1}`))
	f.Add([]byte(`{"id":"x"}`))
	f.Add([]byte("{not json"))
	f.Add([]byte(`{"id":"00000000000000000000000000000000","tool":"t","options":[{"id":"deny"},{"id":"deny"}],"expires":"2100-01-01T00:00:00Z"} trailing`))
	dir := filepath.Join(f.TempDir(), "rv")
	if err := prepare(dir); err != nil {
		f.Fatal(err)
	}
	const id = "00000000000000000000000000000000"
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(askPath(dir, id), b, 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := readAsk(dir, id)
		if err != nil {
			return
		}
		if a.ID != id || a.validate() != nil {
			t.Fatalf("accepted an invalid ask: %+v", a)
		}
		if _, _, err := Scan(dir); err != nil {
			t.Fatalf("Scan failed on a file: %v", err)
		}
	})
}
