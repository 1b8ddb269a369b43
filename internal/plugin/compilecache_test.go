//go:build !toolwarden_wazero_interrupt

package plugin

import (
	"bytes"
	"context"
	"testing"

	"github.com/toolwarden/toolwarden/plugins"
)

// A runtime that loads the same binary again (a warm hook process, at
// every event) gets the module it compiled; a binary that differs in one
// byte, or the caller's buffer changed afterwards, is never taken for it.
func TestARuntimeCompilesEachBinaryOnceAndNeverMistakesAnother(t *testing.T) {
	ctx := context.Background()
	rt, err := NewRuntime(ctx, Options{NoDiskCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	builtin, _ := plugins.Builtin("trifecta")
	bin := bytes.Clone(builtin)
	calls := countInstrument(t)
	first, err := rt.compile(ctx, bin)
	if err != nil {
		t.Fatal(err)
	}
	again, err := rt.compile(ctx, bytes.Clone(builtin))
	if err != nil || again != first || *calls != 1 {
		t.Fatalf("the same bytes again: same module %v, %d instrumentations, %v", again == first, *calls, err)
	}

	// A custom section appended: valid, and a different binary.
	other := append(bytes.Clone(builtin), 0, 6, 4, 'n', 'o', 't', 'e', 1)
	m, err := rt.compile(ctx, other)
	if err != nil || m == first || *calls != 2 {
		t.Fatalf("another binary: same module %v, %d instrumentations, %v", m == first, *calls, err)
	}
	// The caller's buffer changed after the first compile: the module keeps
	// its own copy, so the changed bytes are a new binary.
	copy(bin[len(bin)-1:], []byte{bin[len(bin)-1] ^ 0xff})
	if m, _ := rt.compile(ctx, bin); m == first {
		t.Fatal("a changed buffer matched the module compiled from it")
	}
}
