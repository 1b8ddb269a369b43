package serve

import (
	"encoding/json"
	"testing"

	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
)

// FuzzTeamAnswerScope: whatever scope an answer body names, an "always"
// to an ask with no approvers covers the asker alone, no answer ever
// yields a local grant (the local front ends' scope is not the team
// inbox's to give) or a scope that names nobody, and only "always" takes
// a scope at all.
func FuzzTeamAnswerScope(f *testing.F) {
	for _, s := range []string{"", "principal", "team", "group:ops", "group:", "group: ops", "local", "Team", "group:ops\n"} {
		f.Add("always", s, true)
		f.Add("allow_once", s, false)
	}
	f.Fuzz(func(t *testing.T, option, scope string, approvers bool) {
		a := &store.StoredAsk{Ask: inbox.Ask{Server: "fs", Tool: "write"}, Principal: "mia"}
		if approvers {
			a.Approvers = [][]string{{"group:leads"}}
		}
		var body teamAnswerBody
		raw, _ := json.Marshal(map[string]string{"option": option, "scope": scope})
		if err := json.Unmarshal(raw, &body); err != nil {
			return
		}
		g, err := grantScope(a, body)
		if err != nil {
			return
		}
		switch {
		case option != "always" && g != (session.GrantScope{}):
			t.Fatalf("option %q with scope %q gave a grant scope %+v", option, scope, g)
		case option != "always":
		case g.Kind == session.ScopeLocal:
			t.Fatalf("scope %q gave a local grant", scope)
		case !approvers && g != (session.GrantScope{Kind: session.ScopePrincipal, Name: "mia"}):
			t.Fatalf("with no approvers, scope %q gave %+v, want the asker alone", scope, g)
		case g.Kind != session.ScopeTeam && g.Name == "":
			t.Fatalf("scope %q gave %+v, which names nobody", scope, g)
		case g.Kind != session.ScopeTeam && g.Kind != session.ScopePrincipal && g.Kind != session.ScopeGroup:
			t.Fatalf("scope %q gave the unknown kind %q", scope, g.Kind)
		}
	})
}
