package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
)

// approvals add --scope local grants the local front ends' calls (no
// caller) and no named caller's; list and revoke select it by that
// scope; a local scope with a name is refused and stores nothing.
func TestApprovalsAddListAndRevokeKnowTheLocalScope(t *testing.T) {
	t.Parallel()
	binaries(t)
	env := isolated(t, "/usr/bin:/bin")
	u := "sqlite:" + filepath.Join(t.TempDir(), "store.db")
	s := "--store=" + u
	h := strings.Repeat("e5", 32)
	tw := func(args ...string) ran {
		t.Helper()
		return runBin(t, env, "", built.tw, append([]string{"approvals"}, args...)...)
	}
	if r := tw("add", s, "--server", "fs", "--tool", "t", "--hash", h, "--scope", "local:dana"); r.code != exitUsage || !strings.Contains(r.stderr, "local") {
		t.Fatalf("add --scope local:dana: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := tw("add", s, "--server", "fs", "--tool", "t", "--hash", h, "--scope", "local"); r.code != exitOK {
		t.Fatalf("add --scope local: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	replica, err := store.Open(context.Background(), u, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer replica.Close()
	k := session.ApprovalKey{App: "fs", Server: "fs", Tool: "t", Hash: h}
	for _, c := range []struct {
		w    session.Who
		want bool
	}{{session.Who{}, true}, {session.Who{Principal: "dana", Groups: []string{"dev"}}, false}} {
		if ok, err := replica.Covers(context.Background(), c.w, k, ""); err != nil || ok != c.want {
			t.Errorf("the local grant covers %+v: %v %v, want %v", c.w, ok, err, c.want)
		}
	}
	if gs := approvalsJSON(t, env, s, "--scope", "local"); len(gs) != 1 || gs[0].Scope != (session.GrantScope{Kind: session.ScopeLocal}) {
		t.Fatalf("list --scope local: %+v", gs)
	}
	if gs := approvalsJSON(t, env, s, "--scope", "team"); len(gs) != 0 {
		t.Fatalf("list --scope team shows the local grant: %+v", gs)
	}
	if r := tw("list", s); !strings.Contains(r.stdout, "local") {
		t.Fatalf("list does not name the local scope:\n%s%s", r.stdout, r.stderr)
	}
	if r := tw("revoke", s, "--scope", "local", "--by", "omar"); r.code != exitOK || !strings.Contains(r.stdout, "revoked 1") {
		t.Fatalf("revoke --scope local: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if ok, err := replica.Covers(context.Background(), session.Who{}, k, ""); err != nil || ok {
		t.Fatalf("after the revoke: %v %v", ok, err)
	}
}
