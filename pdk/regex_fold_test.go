package pdk

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestRustKitFoldTableIsArgguards holds the Rust kit's case-folding table to
// argguard's, which fold_test.go there generates from Go's unicode tables:
// the kit's regex engine is a copy of argguard's, and a regenerated table
// must reach both.
func TestRustKitFoldTableIsArgguards(t *testing.T) {
	table := func(path string) []byte {
		raw, err := os.ReadFile(filepath.FromSlash(path))
		if err != nil {
			t.Fatal(err)
		}
		i := bytes.Index(raw, []byte("pub const MIN_FOLD"))
		if i < 0 {
			t.Fatalf("%s: no MIN_FOLD", path)
		}
		return raw[i:]
	}
	kit, argguard := table("rust/src/regex_fold.rs"), table("../plugins/argguard/rust/fold.rs")
	if !bytes.Equal(kit, argguard) {
		t.Fatal("pdk/rust/src/regex_fold.rs differs from plugins/argguard/rust/fold.rs: copy the table over (below the header)")
	}
}
