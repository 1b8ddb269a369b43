package session

import "testing"

// The local scope takes in only callers with no principal (the local
// front ends); the team scope takes in everyone, the local ones too.
func TestTheLocalScopeCoversOnlyCallersWithoutAPrincipal(t *testing.T) {
	local := GrantScope{Kind: ScopeLocal}
	team := GrantScope{Kind: ScopeTeam}
	for _, c := range []struct {
		w           Who
		local, team bool
	}{
		{Who{}, true, true},
		{Who{Groups: []string{"dev"}}, true, true},
		{Who{Principal: "dana"}, false, true},
		{Who{Principal: "local", Groups: []string{"local", ""}}, false, true},
	} {
		if got := local.Covers(c.w); got != c.local {
			t.Errorf("local covers %+v: %v, want %v", c.w, got, c.local)
		}
		if got := team.Covers(c.w); got != c.team {
			t.Errorf("team covers %+v: %v, want %v", c.w, got, c.team)
		}
	}
}
