package pdk

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The Rust kit's regex engine is a copy of argguard's
// (plugins/argguard/rust/regex.rs and fold.rs), where differential fuzz
// tests hold it to Go's regexp. argguard keeps its own copy so that its
// committed module changes only with its own sources; these tests keep the
// two from drifting apart.

func readRust(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// from returns raw from the first occurrence of marker on.
func from(t *testing.T, raw []byte, marker, path string) []byte {
	t.Helper()
	i := bytes.Index(raw, []byte(marker))
	if i < 0 {
		t.Fatalf("%s: no %q", path, marker)
	}
	return raw[i:]
}

// TestRustKitFoldTableIsArgguards holds the kit's case-folding table to
// argguard's, which plugins/argguard/fold_test.go generates from Go's
// unicode tables.
func TestRustKitFoldTableIsArgguards(t *testing.T) {
	const kit, argguard = "rust/src/regex_fold.rs", "../plugins/argguard/rust/fold.rs"
	if !bytes.Equal(from(t, readRust(t, kit), "pub const MIN_FOLD", kit), from(t, readRust(t, argguard), "pub const MIN_FOLD", argguard)) {
		t.Fatal("pdk/rust/src/regex_fold.rs differs from plugins/argguard/rust/fold.rs: copy the table over (below the header)")
	}
}

// TestRustKitRegexIsArgguards holds the kit's engine to argguard's, below
// the module header and apart from the kit's Error::message.
func TestRustKitRegexIsArgguards(t *testing.T) {
	const kit, argguard = "rust/src/regex.rs", "../plugins/argguard/rust/regex.rs"
	const marker = "/// The most instructions"
	k := from(t, readRust(t, kit), marker, kit)
	start := bytes.Index(k, []byte("impl Error {"))
	if start < 0 {
		t.Fatalf("%s: no impl Error", kit)
	}
	end := bytes.Index(k[start:], []byte("\n}\n"))
	if end < 0 {
		t.Fatalf("%s: impl Error does not end", kit)
	}
	k = append(append(bytes.TrimRight(k[:start:start], "\n"), '\n'), k[start+end+3:]...)
	if !bytes.Equal(k, from(t, readRust(t, argguard), marker, argguard)) {
		t.Fatal("pdk/rust/src/regex.rs differs from plugins/argguard/rust/regex.rs below the header: " +
			"bring the change over (keep the kit's header, imports and Error::message)")
	}
}
