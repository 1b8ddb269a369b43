package sdk_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/sdk"
)

// Two agents' guards, each with its own host and its own handle on one
// SQLite store (as two processes would be), share "always" approvals: one
// human's always covers the other agent's next call, and a revoke made
// through the store is seen by the next call that would use it. The guard
// needs nothing of its own for this: the host it decides with is built
// with host.Settings.WithStore.
func TestTwoGuardsOnOneStoreShareAnAlwaysApprovalAndSeeARevoke(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	open := func() *store.Store {
		st, err := store.Open(context.Background(), "sqlite:"+path, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	stA, stB := open(), open()
	f := newFiles()
	askA, askB := &recorder{answer: sdk.AllowAlways}, &recorder{answer: sdk.Deny}
	a := sdk.New(testhost.New(t, "", host.Defaults().WithStore(stA)), sdk.WithApprover(askA)).Client("files", f.connect(t))
	b := sdk.New(testhost.New(t, "", host.Defaults().WithStore(stB)), sdk.WithApprover(askB)).Client("files", f.connect(t))

	if out, isErr := call(t, a, "write_file", map[string]any{"path": "/a.txt", "content": "a"}); isErr || len(askA.asked()) != 1 {
		t.Fatalf("A answered always: %q (error %v, asked %d)", out, isErr, len(askA.asked()))
	}
	if out, isErr := call(t, b, "write_file", map[string]any{"path": "/b.txt", "content": "b"}); isErr || len(askB.asked()) != 0 {
		t.Fatalf("B's call after A's always: %q (error %v, B asked %d times, want 0)", out, isErr, len(askB.asked()))
	}

	n, err := stA.Revoke(context.Background(), store.GrantFilter{Server: "files", Tool: "write_file"}, "test")
	if err != nil || n != 1 {
		t.Fatalf("revoke: %d, %v", n, err)
	}
	if out, isErr := call(t, b, "write_file", map[string]any{"path": "/c.txt", "content": "c"}); !isErr || len(askB.asked()) != 1 {
		t.Fatalf("B's next call after the revoke: %q (error %v, asked %d times, want 1 and a deny)", out, isErr, len(askB.asked()))
	}
	if got := f.ran(); len(got) != 2 {
		t.Fatalf("calls that reached the server: %v, want A's and B's first writes only", got)
	}
}
