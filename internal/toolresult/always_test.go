package toolresult

import (
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/session"
)

// The permanent-approval line of a refusal names where the host reads
// "always" approvals, as a command that can be run as written: the store
// and the grant's scope with a store (never the approvals file, which a
// host with a store does not read), the file without one. A password is
// never printed: the command reads $TOOLWARDEN_STORE instead.
func TestTheAdviceNamesWhereTheHostReadsAlwaysApprovals(t *testing.T) {
	file, _ := session.OpenPersistent("/nonexistent/me/approvals.json")
	d := &host.Decision{Server: "fs", App: "fs", Tool: "write_file", Rememberable: true, DefinitionHash: "abc"}
	for _, tc := range []struct {
		name   string
		always Always
		want   string
		not    []string
	}{
		{"an approvals file", Always{File: file},
			`toolwarden approvals add --approvals "/nonexistent/me/approvals.json" --server fs --tool write_file --hash abc;`, []string{"--store"}},
		{"a SQLite store, a serve caller", Always{Store: true, StoreURL: "sqlite:/srv/tw/store.db", Scope: session.GrantScope{Kind: session.ScopePrincipal, Name: "carol"}},
			`toolwarden approvals add --store sqlite:/srv/tw/store.db --scope principal:carol --server fs --tool write_file --hash abc;`, []string{"--approvals"}},
		{"a store beside a file (the file is not read)", Always{File: file, Store: true, StoreURL: "sqlite:/srv/tw/store.db", Scope: session.GrantScope{Kind: session.ScopeTeam}},
			`toolwarden approvals add --store sqlite:/srv/tw/store.db --scope team --server fs`, []string{"--approvals"}},
		{"a name a shell would split", Always{Store: true, StoreURL: "sqlite:/srv/my store.db", Scope: session.GrantScope{Kind: session.ScopePrincipal, Name: "o'brien x"}},
			`--store 'sqlite:/srv/my store.db' --scope 'principal:o'\''brien x' --server`, nil},
		{"a Postgres URL whose password is hidden", Always{Store: true, StoreURL: "postgres://tw:xxxxx@db:5432/tw?sslmode=require", Scope: session.GrantScope{Kind: session.ScopeTeam}},
			`--store "$TOOLWARDEN_STORE" --scope team --server fs --tool write_file --hash abc (with TOOLWARDEN_STORE set to the shared store's URL, postgres://tw:xxxxx@db:5432/tw?sslmode=require, its password written out);`, nil},
		{"a store that does not say its URL", Always{Store: true, Scope: session.GrantScope{Kind: session.ScopeTeam}},
			`--store "$TOOLWARDEN_STORE" --scope team --server fs --tool write_file --hash abc (with TOOLWARDEN_STORE set to the shared store's URL);`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			HowToAllow(&b, d, tc.always, "answer the prompt", true)
			got := b.String()
			if !strings.Contains(got, tc.want) {
				t.Fatalf("the advice does not say\n%s\nit says\n%s", tc.want, got)
			}
			for _, s := range tc.not {
				if strings.Contains(got, s) {
					t.Fatalf("the advice says %q:\n%s", s, got)
				}
			}
		})
	}
}

// Nowhere to keep it, nothing to advise: a host with neither store nor
// file offers no permanent approval.
func TestTheAdviceOffersNoPermanentApprovalWhenNothingKeepsIt(t *testing.T) {
	var b strings.Builder
	HowToAllow(&b, &host.Decision{Server: "fs", App: "fs", Tool: "w", Rememberable: true}, Always{}, "answer the prompt", false)
	if strings.Contains(b.String(), "approvals add") {
		t.Fatalf("advice with nowhere to keep an approval:\n%s", b.String())
	}
}
