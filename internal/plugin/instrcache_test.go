//go:build !toolwarden_wazero_interrupt

package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/instrument"
	"github.com/toolwarden/toolwarden/plugins"
)

// countInstrument counts instrument.Module calls until the test ends. Not
// parallel: it swaps a package variable.
func countInstrument(t *testing.T) *int {
	n := new(int)
	instrumentModule = func(bin []byte) ([]byte, error) { *n++; return instrument.Module(bin) }
	t.Cleanup(func() { instrumentModule = instrument.Module })
	return n
}

func compileIn(t *testing.T, opts Options, bin []byte) {
	t.Helper()
	ctx := context.Background()
	rt, err := NewRuntime(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	if _, err := rt.compile(ctx, bin); err != nil {
		t.Fatal(err)
	}
}

// A process that finds a module's instrumented form in the disk cache
// compiles that instead of instrumenting again; a damaged file is
// instrumented again and replaced; without a disk cache nothing is kept.
func TestInstrumentedModulesAreKeptInTheDiskCache(t *testing.T) {
	bin, _ := plugins.Builtin("argguard")
	sum := sha256.Sum256(bin)
	dir := t.TempDir()
	kept := filepath.Join(dir, "instrumented", hex.EncodeToString(sum[:])+"-v"+instrument.Version+".wasm")
	calls := countInstrument(t)

	compileIn(t, Options{CacheDir: dir}, bin)
	first, err := os.ReadFile(kept)
	if err != nil || *calls != 1 {
		t.Fatalf("first process: %d instrumentations, kept file: %v", *calls, err)
	}
	compileIn(t, Options{CacheDir: dir}, bin)
	if *calls != 1 {
		t.Fatalf("a second process instrumented again (%d calls) instead of reading %s", *calls, kept)
	}

	for name, damage := range map[string][]byte{
		"truncated":          first[:len(first)/2],
		"a flipped byte":     append([]byte{first[0] ^ 0xff}, first[1:]...),
		"empty":              nil,
		"only a digest long": first[len(first)-sha256.Size:],
	} {
		if err := os.WriteFile(kept, damage, 0o600); err != nil {
			t.Fatal(err)
		}
		before := *calls
		compileIn(t, Options{CacheDir: dir}, bin)
		again, _ := os.ReadFile(kept)
		if *calls != before+1 || string(again) != string(first) {
			t.Errorf("%s file: %d instrumentations, replaced by the good one: %v", name, *calls-before, string(again) == string(first))
		}
	}

	none := t.TempDir()
	compileIn(t, Options{CacheDir: none, NoDiskCache: true}, bin)
	if _, err := os.Stat(filepath.Join(none, "instrumented")); !os.IsNotExist(err) {
		t.Errorf("NoDiskCache kept an instrumented module: %v", err)
	}
}
