package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
)

// hashOf is a distinct definition hash per n (distinct prefixes too).
func hashOf(n int) string { return strings.Repeat(fmt.Sprintf("%08x", n), 8) }

// toolKey is the key of tool n of server "fs".
func toolKey(n int) session.ApprovalKey {
	return session.ApprovalKey{App: "fs", Server: "fs", Tool: fmt.Sprintf("tool_%d", n), Hash: hashOf(n)}
}

var (
	team  = session.GrantScope{Kind: session.ScopeTeam}
	dana  = session.Who{Principal: "dana", Groups: []string{"dev"}}
	omar  = session.Who{Principal: "omar", Groups: []string{"ops"}}
	local = session.Who{} // wrap, proxy, the hook: no principal
)

// twoReplicas runs f on each engine with two handles on one database, as
// two replicas are. The reader's poll is an hour, so that only its
// confirming read (and wake-ups) can keep it current. Staleness is
// generous: these tests check what a confirmed answer says, on machines
// whose load could otherwise fail a confirmation closed (the fail-closed
// tests keep the default).
func twoReplicas(t *testing.T, f func(t *testing.T, a, b *Store)) {
	forEachEngine(t, func(t *testing.T, url string) {
		f(t, openTest(t, url, Options{Replica: "a", Staleness: testStaleness}),
			openTest(t, url, Options{Replica: "b", Poll: time.Hour, Staleness: testStaleness}))
	})
}

const testStaleness = 10 * time.Second

func mustAdd(t testing.TB, s *Store, g session.SharedGrant) session.SharedGrant {
	t.Helper()
	got, err := s.AddGrant(context.Background(), g)
	if err != nil {
		t.Fatalf("AddGrant: %v", err)
	}
	return got
}

func mustCover(t testing.TB, s *Store, w session.Who, k session.ApprovalKey, args string) bool {
	t.Helper()
	ok, err := s.Covers(context.Background(), w, k, args)
	if err != nil {
		t.Fatalf("Covers: %v", err)
	}
	return ok
}

func revision(t testing.TB, s *Store) int64 {
	t.Helper()
	rev, err := s.readRevision(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return rev
}

// A grant covers exactly the calls it names: its scope's callers, its
// tool at its exact definition, and its arguments when it binds them.
// Every other call is asked again.
func TestAGrantCoversOnlyTheCallsItNamesOnAnotherReplica(t *testing.T) {
	t.Parallel()
	argsA := strings.Repeat("a", 64)
	argsB := strings.Repeat("b", 64)
	hash := func(k *session.ApprovalKey) { k.Hash = hashOf(2) }
	tool := func(k *session.ApprovalKey) { k.Tool += "x" }
	server := func(k *session.ApprovalKey) { k.Server += "x" }
	app := func(k *session.ApprovalKey) { k.App += "x" }
	connector := func(k *session.ApprovalKey) { k.Connector = "c1" }
	cases := []struct {
		name  string
		scope session.GrantScope
		args  string
		who   session.Who
		other func(k *session.ApprovalKey) // how the call's key differs, if it does
		call  string                       // the call's arguments digest
		want  bool
	}{
		{"a principal's grant covers that principal", session.GrantScope{Kind: session.ScopePrincipal, Name: "dana"}, "", dana, nil, argsA, true},
		{"a principal's grant does not cover another principal", session.GrantScope{Kind: session.ScopePrincipal, Name: "dana"}, "", omar, nil, argsA, false},
		{"a principal's grant does not cover the local user", session.GrantScope{Kind: session.ScopePrincipal, Name: "dana"}, "", local, nil, argsA, false},
		{"a principal's grant does not cover a principal whose group has that name", session.GrantScope{Kind: session.ScopePrincipal, Name: "ops"}, "", omar, nil, argsA, false},
		{"a group's grant covers a member", session.GrantScope{Kind: session.ScopeGroup, Name: "ops"}, "", omar, nil, argsA, true},
		{"a group's grant does not cover a non-member", session.GrantScope{Kind: session.ScopeGroup, Name: "ops"}, "", dana, nil, argsA, false},
		{"a group's grant does not cover a principal named as the group", session.GrantScope{Kind: session.ScopeGroup, Name: "ops"}, "", session.Who{Principal: "ops"}, nil, argsA, false},
		{"a team grant covers every principal", team, "", omar, nil, argsA, true},
		{"a team grant covers the local user", team, "", local, nil, argsA, true},
		{"a grant does not cover a changed definition", team, "", dana, hash, argsA, false},
		{"a grant does not cover another tool", team, "", dana, tool, argsA, false},
		{"a grant does not cover another server", team, "", dana, server, argsA, false},
		{"a grant does not cover another app", team, "", dana, app, argsA, false},
		{"a grant does not cover another connector", team, "", dana, connector, argsA, false},
		{"a grant bound to arguments covers those arguments", team, argsA, dana, nil, argsA, true},
		{"a grant bound to arguments does not cover changed arguments", team, argsA, dana, nil, argsB, false},
		{"a grant bound to arguments does not cover a call whose arguments have no digest", team, argsA, dana, nil, "", false},
		{"a grant for any arguments covers any arguments", team, "", dana, nil, argsB, true},
	}
	twoReplicas(t, func(t *testing.T, a, b *Store) {
		for i, c := range cases {
			// Each case on a tool of its own, so that cases do not cover each other.
			g := session.SharedGrant{Key: toolKey(1), Scope: c.scope, ArgsDigest: c.args, GrantedBy: "lena"}
			g.Key.Tool = fmt.Sprintf("case_%d", i)
			key := g.Key
			if c.other != nil {
				c.other(&key)
			}
			mustAdd(t, a, g)
			if got := mustCover(t, b, c.who, key, c.call); got != c.want {
				t.Errorf("%s: Covers = %v, want %v", c.name, got, c.want)
			}
		}
	})
}

// The heart of fan-out: once Revoke returns on one replica, no Covers
// that begins afterwards on another replica reports the grant, and once
// AddGrant returns, every Covers that begins afterwards sees it — with
// callers racing the writes, and no poll to help (the reader's is an
// hour).
func TestARevokeOnOneReplicaIsNeverCoveredByAnothersNextCovers(t *testing.T) {
	t.Parallel()
	const rounds, readers = 150, 4
	twoReplicas(t, func(t *testing.T, a, b *Store) {
		ctx := context.Background()
		// The last round whose grant was added, whose revoke began, whose
		// revoke returned.
		var added, revoking, revoked atomic.Int64
		added.Store(-1)
		revoking.Store(-1)
		revoked.Store(-1)
		var failures atomic.Int64
		fail := func(format string, args ...any) {
			if failures.Add(1) <= 5 {
				t.Errorf(format, args...)
			}
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for r := 0; r < readers; r++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					if n := revoked.Load(); n >= 0 {
						if ok, err := b.Covers(ctx, dana, toolKey(int(n)), ""); err != nil || ok {
							fail("round %d: a Covers begun after the revoke returned %v, %v", n, ok, err)
						}
					}
					if n := added.Load(); n >= 0 {
						ok, err := b.Covers(ctx, dana, toolKey(int(n)), "")
						if err != nil || !ok && revoking.Load() < n {
							fail("round %d: a Covers begun after the grant was added and ended before its revoke began returned %v, %v", n, ok, err)
						}
					}
				}
			}()
		}
		for n := 0; n < rounds && failures.Load() == 0; n++ {
			mustAdd(t, a, session.SharedGrant{Key: toolKey(n), Scope: team, GrantedBy: "lena"})
			added.Store(int64(n))
			if !mustCover(t, b, dana, toolKey(n), "") {
				t.Fatalf("round %d: the grant added on a is not covered on b", n)
			}
			revoking.Store(int64(n))
			if got, err := a.Revoke(ctx, GrantFilter{Hash: hashOf(n)}, "lena"); err != nil || got != 1 {
				t.Fatalf("round %d: Revoke = %d, %v", n, got, err)
			}
			revoked.Store(int64(n))
			if mustCover(t, b, dana, toolKey(n), "") {
				t.Fatalf("round %d: the grant revoked on a is still covered by b's next Covers", n)
			}
		}
		close(stop)
		wg.Wait()
	})
}

// Rows are never deleted: a revoke records who and when, the history
// lists it, a second revoke of the same grant changes nothing (its first
// revoker stays), and each write that changed something moved the
// revision once.
func TestRevokeKeepsTheGrantAsHistoryWithWhoRevokedIt(t *testing.T) {
	t.Parallel()
	twoReplicas(t, func(t *testing.T, a, b *Store) {
		ctx := context.Background()
		rev0 := revision(t, a)
		g := mustAdd(t, a, session.SharedGrant{Key: toolKey(1), Scope: team, GrantedBy: "lena", ArgsPreview: `{"path":"/tmp"}`})
		if len(g.ID) != 32 || g.GrantedAt.IsZero() {
			t.Fatalf("the stored grant has id %q, granted at %v", g.ID, g.GrantedAt)
		}
		if rev := revision(t, a); rev != rev0+1 {
			t.Fatalf("AddGrant moved the revision from %d to %d, want +1", rev0, rev)
		}
		if n, err := b.Revoke(ctx, GrantFilter{ID: g.ID}, "omar"); err != nil || n != 1 {
			t.Fatalf("Revoke = %d, %v", n, err)
		}
		if n, err := a.Revoke(ctx, GrantFilter{ID: g.ID}, "mallory"); err != nil || n != 0 {
			t.Fatalf("a second Revoke = %d, %v, want 0", n, err)
		}
		if rev := revision(t, a); rev != rev0+2 {
			t.Fatalf("after one revoke that ended a grant and one that ended none, the revision is %d, want %d", rev, rev0+2)
		}
		if live, err := a.Grants(ctx, GrantFilter{}); err != nil || len(live) != 0 {
			t.Fatalf("live grants after the revoke: %v, %v", live, err)
		}
		all, err := a.Grants(ctx, GrantFilter{Revoked: true})
		if err != nil || len(all) != 1 {
			t.Fatalf("every grant: %v, %v", all, err)
		}
		h := all[0]
		if h.ID != g.ID || h.RevokedBy != "omar" || h.RevokedAt.IsZero() || h.GrantedBy != "lena" || h.ArgsPreview != `{"path":"/tmp"}` || !h.GrantedAt.Equal(g.GrantedAt) {
			t.Fatalf("the history shows %+v", h)
		}
	})
}

// "Always" answered twice for the same thing (on two replicas at once)
// leaves one grant, so that one revoke ends it.
func TestAGrantAddedTwiceIsOneGrantThatOneRevokeEnds(t *testing.T) {
	t.Parallel()
	twoReplicas(t, func(t *testing.T, a, b *Store) {
		ctx := context.Background()
		g := session.SharedGrant{Key: toolKey(1), Scope: session.GrantScope{Kind: session.ScopeGroup, Name: "dev"}, GrantedBy: "lena"}
		ids := make([]string, 8)
		var wg sync.WaitGroup
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := a
				if i%2 == 1 {
					s = b
				}
				got, err := s.AddGrant(ctx, g)
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = got.ID
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if id != ids[0] {
				t.Fatalf("concurrent adds of one grant stored several: %v", ids)
			}
		}
		if n, err := a.Revoke(ctx, GrantFilter{ID: ids[0]}, "lena"); err != nil || n != 1 {
			t.Fatalf("Revoke = %d, %v", n, err)
		}
		if mustCover(t, b, dana, g.Key, "") {
			t.Fatal("a grant added twice survived one revoke")
		}
		// The same key for another scope is another grant.
		other := mustAdd(t, a, session.SharedGrant{Key: toolKey(1), Scope: team, GrantedBy: "lena"})
		if other.ID == ids[0] {
			t.Fatal("a team grant was taken for the group's")
		}
	})
}

// Revoke's filters select what the file form's do (server, tool, hash or
// a prefix of it) and more (id, scope); a filter selecting everything
// must say so.
func TestRevokeSelectsByFilterAndRefusesAnUnsaidEverything(t *testing.T) {
	t.Parallel()
	twoReplicas(t, func(t *testing.T, a, b *Store) {
		ctx := context.Background()
		group := session.GrantScope{Kind: session.ScopeGroup, Name: "ops"}
		for n := 1; n <= 4; n++ {
			mustAdd(t, a, session.SharedGrant{Key: toolKey(n), Scope: team})
			mustAdd(t, a, session.SharedGrant{Key: toolKey(n), Scope: group})
		}
		if _, err := a.Revoke(ctx, GrantFilter{}, "lena"); err == nil {
			t.Fatal("an empty filter revoked without All")
		}
		if _, err := a.Revoke(ctx, GrantFilter{Hash: "zz"}, "lena"); err == nil {
			t.Fatal("a hash that is not hex was taken")
		}
		if _, err := a.Revoke(ctx, GrantFilter{Scope: session.GrantScope{Kind: "everyone"}}, "lena"); err == nil {
			t.Fatal("an unknown scope was taken")
		}
		steps := []struct {
			f    GrantFilter
			want int
		}{
			{GrantFilter{Tool: "tool_1", Scope: group}, 1},
			{GrantFilter{Hash: hashOf(2)[:40]}, 2},
			{GrantFilter{Hash: strings.ToUpper(hashOf(3))}, 2},
			{GrantFilter{Server: "elsewhere"}, 0},
			{GrantFilter{All: true}, 3},
		}
		for _, s := range steps {
			if n, err := a.Revoke(ctx, s.f, "lena"); err != nil || n != s.want {
				t.Fatalf("Revoke(%+v) = %d, %v, want %d", s.f, n, err, s.want)
			}
		}
		if mustCover(t, b, omar, toolKey(4), "") {
			t.Fatal("Revoke with All left a grant covering")
		}
	})
}

// A grant that could not be matched as meant is refused with a reason.
func TestAddGrantRefusesAGrantThatCannotBeMatchedAsMeant(t *testing.T) {
	t.Parallel()
	s := openTest(t, engines[0].url(t), Options{})
	ok := session.SharedGrant{Key: toolKey(1), Scope: team}
	cases := []struct {
		name   string
		change func(g *session.SharedGrant)
		says   string
	}{
		{"no tool", func(g *session.SharedGrant) { g.Key.Tool = "" }, "tool is empty"},
		{"a short hash", func(g *session.SharedGrant) { g.Key.Hash = "abcdef12" }, "64 hex"},
		{"a principal scope without a name", func(g *session.SharedGrant) { g.Scope = session.GrantScope{Kind: session.ScopePrincipal} }, "names no principal"},
		{"a group scope without a name", func(g *session.SharedGrant) { g.Scope = session.GrantScope{Kind: session.ScopeGroup} }, "names no group"},
		{"a team scope with a name", func(g *session.SharedGrant) { g.Scope = session.GrantScope{Kind: session.ScopeTeam, Name: "x"} }, "team scope names nobody"},
		{"no scope", func(g *session.SharedGrant) { g.Scope = session.GrantScope{} }, "unknown grant scope"},
		{"an arguments digest that is not one", func(g *session.SharedGrant) { g.ArgsDigest = "{}" }, "arguments digest"},
		{"a revoked grant", func(g *session.SharedGrant) { g.RevokedAt = time.Now() }, "already revoked"},
	}
	for _, c := range cases {
		g := ok
		c.change(&g)
		if _, err := s.AddGrant(context.Background(), g); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: AddGrant error %v, want one saying %q", c.name, err, c.says)
		}
	}
	if live, err := s.Grants(context.Background(), GrantFilter{Revoked: true}); err != nil || len(live) != 0 {
		t.Fatalf("refused grants were stored: %v, %v", live, err)
	}
}

// Callers that find the revision moved at once share one refresh: the
// changed row is read once, not once per caller.
func TestConcurrentCoversShareOneRefresh(t *testing.T) {
	t.Parallel()
	twoReplicas(t, func(t *testing.T, a, b *Store) {
		ctx := context.Background()
		g := mustAdd(t, a, session.SharedGrant{Key: toolKey(1), Scope: team})
		mustCover(t, b, dana, g.Key, "")
		if _, err := a.Revoke(ctx, GrantFilter{ID: g.ID}, "lena"); err != nil {
			t.Fatal(err)
		}
		before := b.grants.rowsRead.Load()
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < 32; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if ok, err := b.Covers(ctx, dana, g.Key, ""); err != nil || ok {
					t.Errorf("Covers after the revoke = %v, %v", ok, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if read := b.grants.rowsRead.Load() - before; read != 1 {
			t.Fatalf("32 callers read %d grant rows to learn of one revoke, want 1", read)
		}
	})
}

// A Covers whose context is already over cannot confirm anything: it
// fails closed.
func TestCoversWithAnEndedContextFailsClosed(t *testing.T) {
	t.Parallel()
	forEachEngine(t, func(t *testing.T, url string) {
		s := openTest(t, url, Options{})
		mustAdd(t, s, session.SharedGrant{Key: toolKey(1), Scope: team})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ok, err := s.Covers(ctx, dana, toolKey(1), "")
		if ok || !errors.Is(err, session.ErrNotCurrent) {
			t.Fatalf("Covers = %v, %v; want false and ErrNotCurrent", ok, err)
		}
	})
}
