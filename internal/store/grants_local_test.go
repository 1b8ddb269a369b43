package store

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/session"
)

var localScope = session.GrantScope{Kind: session.ScopeLocal}

// A local grant (what a caller-less "always" is) covers the local front
// ends' calls on every replica and no named caller's, whatever groups
// they have; list and revoke select it by its scope like any other.
func TestALocalGrantCoversOnlyCallsWithNoCallerOnEveryReplica(t *testing.T) {
	twoReplicas(t, func(t *testing.T, a, b *Store) {
		ctx := context.Background()
		g := mustAdd(t, a, session.SharedGrant{Key: toolKey(1), Scope: localScope})
		if g.Scope != localScope {
			t.Fatalf("stored scope %+v", g.Scope)
		}
		if !mustCover(t, b, local, toolKey(1), "") {
			t.Error("a local front end's call on the other replica is not covered")
		}
		for _, w := range []session.Who{dana, omar, {Principal: "local"}, {Principal: "x", Groups: []string{"local", ""}}} {
			if mustCover(t, b, w, toolKey(1), "") {
				t.Errorf("a local grant covers the named caller %+v", w)
			}
		}
		gs, err := b.Grants(ctx, GrantFilter{Scope: localScope})
		if err != nil || len(gs) != 1 || gs[0].ID != g.ID {
			t.Fatalf("grants of scope local: %+v %v", gs, err)
		}
		if gs, err := b.Grants(ctx, GrantFilter{Scope: team}); err != nil || len(gs) != 0 {
			t.Fatalf("a team filter selects the local grant: %+v %v", gs, err)
		}
		if n, err := b.Revoke(ctx, GrantFilter{Scope: localScope}, "admin"); err != nil || n != 1 {
			t.Fatalf("revoke local: %d %v", n, err)
		}
		if mustCover(t, a, local, toolKey(1), "") {
			t.Error("the revoked local grant still covers")
		}
	})
}

// A local scope names nobody: one with a name is refused.
func TestAddGrantRefusesALocalScopeWithAName(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s := openTest(t, url, Options{})
		_, err := s.AddGrant(context.Background(), session.SharedGrant{Key: toolKey(1), Scope: session.GrantScope{Kind: session.ScopeLocal, Name: "dana"}})
		if err == nil || !strings.Contains(err.Error(), "local scope names nobody") {
			t.Fatalf("AddGrant local:dana: %v", err)
		}
	})
}
