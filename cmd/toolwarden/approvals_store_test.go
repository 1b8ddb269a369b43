package main

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// storeEngines are the stores the approvals command is tried on: a
// SQLite file and a Postgres database of a throwaway cluster (skipped
// when PostgreSQL is not installed, failed under
// TOOLWARDEN_REQUIRE_TOOLCHAINS=1).
var storeEngines = []struct {
	name string
	url  func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "store.db") }},
	{"postgres", func(t *testing.T) string {
		c := pgtest.Start(t)
		return c.URL(c.CreateDB(t))
	}},
}

// approvalsJSON runs approvals list --json and decodes it.
func approvalsJSON(t *testing.T, env []string, args ...string) []session.SharedGrant {
	t.Helper()
	r := runBin(t, env, "", built.tw, append([]string{"approvals", "list", "--json"}, args...)...)
	var gs []session.SharedGrant
	if err := json.Unmarshal([]byte(r.stdout), &gs); r.code != exitOK || err != nil {
		t.Fatalf("approvals list --json %v: exit %d, %v\n%s%s", args, r.code, err, r.stdout, r.stderr)
	}
	return gs
}

var approvedID = regexp.MustCompile(`\(id ([0-9a-f]{32})`)

// toolwarden approvals add, list and revoke work on a shared store
// through the real binary, as they do on the file: a grant added there
// covers the calls of its scope for another process using the store at
// once, a revoke by id ends it there before the next decision, and the
// history keeps who granted and who revoked.
func TestApprovalsCommandsWorkOnASharedStoreThroughTheBinary(t *testing.T) {
	t.Parallel()
	binaries(t)
	h1, h2, h3 := strings.Repeat("a1", 32), strings.Repeat("b2", 32), strings.Repeat("c3", 32)
	me := "cli"
	if u, err := user.Current(); err == nil && u.Username != "" {
		me = u.Username
	}
	for _, e := range storeEngines {
		t.Run(e.name, func(t *testing.T) {
			t.Parallel()
			u := e.url(t)
			env := isolated(t, "/usr/bin:/bin")
			tw := func(args ...string) ran {
				t.Helper()
				return runBin(t, env, "", built.tw, append([]string{"approvals"}, args...)...)
			}
			s := "--store=" + u

			// Add: each scope; the same grant twice is one grant.
			r := tw("add", s, "--server", "fs", "--tool", "write_file", "--hash", h1, "--scope", "team", "--by", "lena")
			m := approvedID.FindStringSubmatch(r.stdout)
			if r.code != exitOK || m == nil || !strings.Contains(r.stdout, "approved fs/write_file") {
				t.Fatalf("add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			teamID := m[1]
			if r := tw("add", s, "--server", "fs", "--tool", "write_file", "--hash", h1, "--scope", "team"); r.code != exitOK ||
				!strings.Contains(r.stdout, "already approved") || !strings.Contains(r.stdout, teamID) {
				t.Fatalf("adding the same grant again: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r := tw("add", s, "--server", "fs", "--tool", "edit_file", "--hash", h2, "--scope", "group:ops"); r.code != exitOK {
				t.Fatalf("add a group grant: exit %d %s", r.code, r.stderr)
			}
			if r := tw("add", s, "--server", "gh", "--tool", "create_issue", "--hash", h3, "--app", "github", "--scope", "principal:dana"); r.code != exitOK {
				t.Fatalf("add a principal grant: exit %d %s", r.code, r.stderr)
			}

			// Another process on the store sees them, each for its scope only.
			replica, err := store.Open(context.Background(), u, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer replica.Close()
			covers := func(w session.Who, k session.ApprovalKey) bool {
				ok, err := replica.Covers(context.Background(), w, k, "")
				if err != nil {
					t.Fatal(err)
				}
				return ok
			}
			kTeam := session.ApprovalKey{App: "fs", Server: "fs", Tool: "write_file", Hash: h1}
			kOps := session.ApprovalKey{App: "fs", Server: "fs", Tool: "edit_file", Hash: h2}
			kDana := session.ApprovalKey{App: "github", Server: "gh", Tool: "create_issue", Hash: h3}
			dana, omar := session.Who{Principal: "dana"}, session.Who{Principal: "omar", Groups: []string{"ops"}}
			if !covers(session.Who{}, kTeam) || !covers(omar, kOps) || covers(dana, kOps) || !covers(dana, kDana) || covers(omar, kDana) {
				t.Fatal("the grants added by the command do not cover exactly their scopes")
			}

			// List: the table and the filters.
			r = tw("list", s)
			for _, want := range []string{"ID", "SCOPE", "GRANTED BY", teamID[:12], "team", "group:ops", "principal:dana", "lena", "write_file", "github", h1[:12], "any"} {
				if !strings.Contains(r.stdout, want) {
					t.Fatalf("list does not show %q:\n%s%s", want, r.stdout, r.stderr)
				}
			}
			if gs := approvalsJSON(t, env, s, "--server", "fs"); len(gs) != 2 {
				t.Fatalf("list --server fs: %d grants", len(gs))
			}
			if gs := approvalsJSON(t, env, s, "--scope", "group:ops"); len(gs) != 1 || gs[0].Key.Tool != "edit_file" {
				t.Fatalf("list --scope group:ops: %+v", gs)
			}

			// Revoke by an id prefix, recording who: the other process's
			// next Covers no longer sees it.
			auditFile := filepath.Join(t.TempDir(), "audit.jsonl")
			if r := tw("revoke", s, "--id", teamID[:8], "--by", "omar", "--audit", auditFile); r.code != exitOK || !strings.Contains(r.stdout, "revoked 1") {
				t.Fatalf("revoke --id: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if covers(session.Who{}, kTeam) {
				t.Fatal("the grant revoked by the command is still covered by another process's next Covers")
			}
			if b, err := os.ReadFile(auditFile); err != nil || !strings.Contains(string(b), `"event":"revoke"`) ||
				!strings.Contains(string(b), `"by":"omar"`) || !strings.Contains(string(b), teamID) {
				t.Fatalf("the audit log does not record the revoke with who and which grant: %v\n%s", err, b)
			}
			// Revoke by the file form's filters, by the OS user by default.
			if r := tw("revoke", s, "--hash", h2[:8]); r.code != exitOK || !strings.Contains(r.stdout, "revoked 1") {
				t.Fatalf("revoke --hash: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}

			// History: list hides revoked grants, --all shows them with who.
			if r := tw("list", s); strings.Contains(r.stdout, "write_file") || !strings.Contains(r.stdout, "create_issue") {
				t.Fatalf("list after the revokes:\n%s", r.stdout)
			}
			all := approvalsJSON(t, env, s, "--all")
			revokedBy := map[string]string{}
			for _, g := range all {
				revokedBy[g.Key.Tool] = g.RevokedBy
			}
			if len(all) != 3 || revokedBy["write_file"] != "omar" || revokedBy["edit_file"] != me || revokedBy["create_issue"] != "" {
				t.Fatalf("list --all shows %+v", all)
			}
			if r := tw("list", s, "--all"); !strings.Contains(r.stdout, "REVOKED BY") || !strings.Contains(r.stdout, "omar") {
				t.Fatalf("list --all table:\n%s", r.stdout)
			}

			// The environment names the store as --store does.
			envStore := append(append([]string{}, env...), "TOOLWARDEN_STORE="+u)
			if r := runBin(t, envStore, "", built.tw, "approvals", "revoke", "--all"); r.code != exitOK || !strings.Contains(r.stdout, "revoked 1") {
				t.Fatalf("revoke --all with $TOOLWARDEN_STORE: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r := tw("list", s); !strings.Contains(r.stdout, "no approvals") {
				t.Fatalf("list after revoking everything:\n%s", r.stdout)
			}
			noPasswordShows(t, env, u)
		})
	}
}

// What the command refuses on a store, and why: each with a clear error
// and nothing changed.
func TestApprovalsOnAStoreRefuseWhatTheyCannotDoAsMeant(t *testing.T) {
	t.Parallel()
	binaries(t)
	env := isolated(t, "/usr/bin:/bin")
	dir := t.TempDir()
	s := "--store=sqlite:" + filepath.Join(dir, "store.db")
	file := filepath.Join(dir, "approvals.json")
	h := strings.Repeat("d4", 32)
	if r := runBin(t, env, "", built.tw, "approvals", "add", s, "--server", "fs", "--tool", "t", "--hash", h, "--scope", "team"); r.code != exitOK {
		t.Fatalf("add: exit %d %s", r.code, r.stderr)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		says string
	}{
		{"add without a scope", []string{"add", s, "--server", "fs", "--tool", "t", "--hash", h}, exitUsage, "--scope"},
		{"add with a scope that names nobody", []string{"add", s, "--server", "fs", "--tool", "t", "--hash", h, "--scope", "principal:"}, exitUsage, "principal:NAME"},
		{"add with an unknown scope", []string{"add", s, "--server", "fs", "--tool", "t", "--hash", h, "--scope", "everyone"}, exitUsage, "principal:NAME"},
		{"revoke with no filter", []string{"revoke", s}, exitUsage, "--all"},
		{"revoke by an id too short to be sure", []string{"revoke", s, "--id", "ab"}, exitUsage, "at least 8"},
		{"revoke matching nothing", []string{"revoke", s, "--tool", "nothing"}, exitError, "no approval matched"},
		{"reset on a store", []string{"reset", s}, exitUsage, "revoke --all"},
		{"a file and a store at once", []string{"list", s, "--approvals", file}, exitUsage, "both given"},
		{"list --all without a store", []string{"list", "--all", "--approvals", file}, exitUsage, "--all works on a shared store"},
		{"revoke --id without a store", []string{"revoke", "--id", "abcdef12", "--approvals", file}, exitUsage, "--id works on a shared store"},
		{"add --scope without a store", []string{"add", "--scope", "team", "--server", "fs", "--tool", "t", "--hash", h, "--approvals", file}, exitUsage, "--scope works on a shared store"},
		{"an unknown store engine", []string{"list", "--store", "mysql://x"}, exitError, "unknown store engine"},
	} {
		r := runBin(t, env, "", built.tw, append([]string{"approvals"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.says) {
			t.Errorf("%s: exit %d, want %d saying %q\n%s%s", c.name, r.code, c.code, c.says, r.stdout, r.stderr)
		}
	}
	if gs := approvalsJSON(t, env, s, "--all"); len(gs) != 1 || !gs[0].RevokedAt.IsZero() {
		t.Fatalf("a refused command changed the store: %+v", gs)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Fatalf("a refused command wrote the approvals file: %v", err)
	}
}

// noPasswordShows checks that a store URL's password never shows in what
// the command prints, whether the server takes it or refuses it.
func noPasswordShows(t *testing.T, env []string, storeURL string) {
	t.Helper()
	good, err := url.Parse(storeURL)
	if err != nil || good.User == nil {
		return // a SQLite path has no password
	}
	password, _ := good.User.Password()
	bad := *good
	bad.User = url.UserPassword(good.User.Username(), "Wr0ng-s3cret")
	for _, c := range []struct {
		url  string
		code int
		says string
	}{{storeURL, exitOK, "no approvals in postgres://"}, {bad.String(), exitError, "password authentication failed"}} {
		r := runBin(t, env, "", built.tw, "approvals", "list", "--store", c.url)
		out := r.stdout + r.stderr
		if password != "" && strings.Contains(out, password) || strings.Contains(out, "Wr0ng-s3cret") {
			t.Fatalf("the password shows:\n%s", out)
		}
		if r.code != c.code || !strings.Contains(out, c.says) {
			t.Fatalf("list --store: exit %d, want %d saying %q\n%s", r.code, c.code, c.says, out)
		}
	}
}
