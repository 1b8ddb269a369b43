package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// Replicas of `toolwarden serve` on one Postgres database behave as one
// gateway: what one replica was told (an "always" answer, a revoke, a
// redeemed request state, a conversation's taint) holds on every other
// before its next decision. Three replicas are started once for the
// group; each step uses its own principal, message or conversation.
func TestReplicasOnOnePostgresDecideAsOneGateway(t *testing.T) {
	t.Parallel()
	db := pgtest.Shared(t)
	f := newStoreFleet(t, db.URL)
	f.startN(t, 3)
	t.Run("an always approval given via A is used via B and C without an ask, in both eras", func(t *testing.T) {
		storeAlwaysAcrossReplicas(t, f)
	})
	t.Run("a revoke is seen by the very next call of every replica", func(t *testing.T) {
		storeRevokeAcrossReplicas(t, f)
	})
	t.Run("a revoke whose notification is lost is still seen by the very next call", func(t *testing.T) {
		storeRevokeWithoutNotify(t, f, db)
	})
	t.Run("a request state is redeemed once under concurrent retries to every replica", func(t *testing.T) {
		storeRequestStateOnce(t, f)
	})
	t.Run("a conversation's taint set via A blocks the exfiltrating call via B", func(t *testing.T) {
		storeTaintAcrossReplicas(t, f)
	})
}

// storeAlwaysAcrossReplicas: alice answers "always" on A (a 2025-era
// session, elicitation) and bob on C (2026-07-28, a multi round-trip
// input request); each is then served on the other replicas, in the other
// era, with no ask, while the other principal is still asked (a grant
// covers the principal who gave it).
func storeAlwaysAcrossReplicas(t *testing.T, f *storeFleet) {
	a, b, c := f.replicas[0], f.replicas[1], f.replicas[2]
	grant := func(s *opsServe, era, token, msg string) {
		t.Helper()
		ask := answers("always")
		cl := storeClient(t, s, era, token, ask)
		out, isErr := cl.call(t, "gate__echo", map[string]any{"message": msg})
		if isErr || out != "echo: "+msg+" (seen 1)" || ask.count() != 1 {
			t.Fatalf("%s answering always: %q (error %v, asked %d times)", token, out, isErr, ask.count())
		}
		if opts := fmt.Sprint(ask.last().Params.RequestedSchema); !strings.Contains(opts, "always") {
			t.Fatalf("the prompt offered no always: %s", opts)
		}
	}
	usedWithoutAsk := func(s *opsServe, era, token, msg string) {
		t.Helper()
		ask := answers("deny")
		cl := storeClient(t, s, era, token, ask)
		out, isErr := cl.call(t, "gate__echo", map[string]any{"message": msg})
		if isErr || out != "echo: "+msg+" (seen 1)" || ask.count() != 0 {
			t.Fatalf("%s's grant on another replica (%s): %q (error %v, asked %d times)", token, era, out, isErr, ask.count())
		}
	}
	stillAsked := func(s *opsServe, era, token, msg string) {
		t.Helper()
		ask := answers("deny")
		cl := storeClient(t, s, era, token, ask)
		out, isErr := cl.call(t, "gate__echo", map[string]any{"message": msg})
		if !isErr || ask.count() != 1 {
			t.Fatalf("%s was not asked (%s): %q (error %v, asked %d times)", token, era, out, isErr, ask.count())
		}
	}
	grant(a, legacyEra, "alice-token", "always-alice-A")
	stillAsked(b, modernEra, "bob-token", "bob-before-his-grant")
	usedWithoutAsk(b, modernEra, "alice-token", "always-alice-B")
	usedWithoutAsk(c, legacyEra, "alice-token", "always-alice-C")

	grant(c, modernEra, "bob-token", "always-bob-C")
	usedWithoutAsk(a, legacyEra, "bob-token", "always-bob-A")
	usedWithoutAsk(b, modernEra, "bob-token", "always-bob-B")
}

// storeRevokeAcrossReplicas: carol and dave answer "always" on A; with
// carol's grant in use on B and C (their snapshots warm), `toolwarden
// approvals revoke --store --scope principal:carol` ends it, and carol's
// very next call on B and on C, with no pause, is asked again, while
// dave's grant, not matched by the revoke, still holds.
func storeRevokeAcrossReplicas(t *testing.T, f *storeFleet) {
	a, b, c := f.replicas[0], f.replicas[1], f.replicas[2]
	for _, who := range []string{"carol-token", "dave-token"} {
		ask := answers("always")
		if out, isErr := storeClient(t, a, legacyEra, who, ask).call(t, "gate__echo", map[string]any{"message": "always-" + who}); isErr || ask.count() != 1 {
			t.Fatalf("%s answering always on A: %q (error %v, asked %d)", who, out, isErr, ask.count())
		}
	}
	askB, askC := answers("deny"), answers("deny")
	onB := storeClient(t, b, legacyEra, "carol-token", askB)
	onC := storeClient(t, c, modernEra, "carol-token", askC)
	for i, cl := range []*goClient{onB, onC} {
		msg := fmt.Sprintf("revoke-warm-%d", i)
		if out, isErr := cl.call(t, "gate__echo", map[string]any{"message": msg}); isErr || out != "echo: "+msg+" (seen 1)" {
			t.Fatalf("before the revoke, carol's grant did not hold: %q (error %v)", out, isErr)
		}
	}
	if askB.count()+askC.count() != 0 {
		t.Fatalf("asked before the revoke: B %d, C %d", askB.count(), askC.count())
	}
	out, code := twRun(t, nil, "approvals", "revoke", "--store", f.store, "--server", "gate", "--tool", "echo", "--scope", "principal:carol", "--by", "e2e-admin")
	if code != 0 {
		t.Fatalf("approvals revoke --store: exit %d:\n%s", code, out)
	}
	for name, cl := range map[string]*goClient{"B": onB, "C": onC} {
		msg := "revoke-after-" + name
		out, isErr := cl.call(t, "gate__echo", map[string]any{"message": msg})
		if !isErr || strings.Contains(out, "(seen") {
			t.Errorf("carol's next call on %s after the revoke ran: %q", name, out)
		}
	}
	if askB.count() != 1 || askC.count() != 1 {
		t.Fatalf("after the revoke, carol was asked on B %d times and on C %d times, want once each", askB.count(), askC.count())
	}
	askDave := answers("deny")
	if out, isErr := storeClient(t, b, modernEra, "dave-token", askDave).call(t, "gate__echo", map[string]any{"message": "dave-after-revoke"}); isErr || askDave.count() != 0 {
		t.Fatalf("dave's grant, which the revoke did not match, on B: %q (error %v, asked %d)", out, isErr, askDave.count())
	}
	// The revoke is history, not a deletion: list --all shows it, and who
	// revoked it.
	listed, code := twRun(t, nil, "approvals", "list", "--store", f.store, "--all", "--scope", "principal:carol", "--json")
	if code != 0 || !strings.Contains(listed, "e2e-admin") {
		t.Errorf("approvals list --store --all after the revoke: exit %d:\n%s", code, listed)
	}
}

// storeRevokeWithoutNotify: LISTEN/NOTIFY only wakes replicas early; the
// guarantee is the revision each replica reads before a decision that
// would use a grant. Every replica's listening connection is ended by the
// server (as a network blip or a failover would), frank's grant is revoked
// at once through the store, and frank's next call on B, made within a
// few milliseconds (well inside the listener's reconnect delay and the
// poll interval), is asked again.
func storeRevokeWithoutNotify(t *testing.T, f *storeFleet, db *pgtest.DB) {
	a, b := f.replicas[0], f.replicas[1]
	ask := answers("always")
	if out, isErr := storeClient(t, a, legacyEra, "frank-token", ask).call(t, "gate__echo", map[string]any{"message": "always-frank"}); isErr || ask.count() != 1 {
		t.Fatalf("frank answering always on A: %q (error %v, asked %d)", out, isErr, ask.count())
	}
	askB := answers("deny")
	onB := storeClient(t, b, legacyEra, "frank-token", askB)
	if out, isErr := onB.call(t, "gate__echo", map[string]any{"message": "frank-warm"}); isErr || askB.count() != 0 {
		t.Fatalf("frank's grant on B before the revoke: %q (error %v, asked %d)", out, isErr, askB.count())
	}
	ctx := testContext(t)
	st, err := store.Open(ctx, f.store, store.Options{Replica: "e2e-admin"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ended, err := db.Cluster.Query(db.Name, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'")
	if err != nil || ended == "0" {
		t.Fatalf("ending the replicas' listeners: %q, %v", ended, err)
	}
	n, err := st.Revoke(ctx, store.GrantFilter{Server: "gate", Tool: "echo", Scope: session.GrantScope{Kind: session.ScopePrincipal, Name: "frank"}}, "e2e-admin")
	if err != nil || n != 1 {
		t.Fatalf("revoking frank's grant: %d revoked, %v", n, err)
	}
	out, isErr := onB.call(t, "gate__echo", map[string]any{"message": "frank-after-revoke"})
	if !isErr || strings.Contains(out, "(seen") || askB.count() != 1 {
		t.Fatalf("frank's next call on B, its listener ended, after the revoke: %q (error %v, asked %d)", out, isErr, askB.count())
	}
}

// storeRequestStateOnce: one 2026-07-28 ask of erin (who has no grant),
// its answered retry sent 12 times at once to all three replicas: exactly
// one is served (and the upstream ran the call once), every other is
// refused as used. A fresh
// approval for the same message then shows the upstream's count at 2.
func storeRequestStateOnce(t *testing.T, f *storeFleet) {
	const msg = "redeemed-once"
	args := map[string]any{"message": msg}
	first := storeCall(t, f.replicas[0], "erin-token", "", "gate__echo", args, nil)
	if !asked(first) {
		t.Fatalf("the call was not asked about: %s", first.body)
	}
	retry := answered(first, "allow_once")
	const n = 12
	// Each replica's connections are opened and warm before the retries
	// go, so that they land together rather than one TCP handshake apart.
	hcs := make([]*http.Client, len(f.replicas))
	for i, s := range f.replicas {
		hcs[i] = benchHTTPClient(n)
		var warm sync.WaitGroup
		for range n / len(f.replicas) {
			warm.Add(1)
			go func() {
				defer warm.Done()
				h, body := coreModern("erin-token", "tools/list", "", map[string]any{}, true)
				storePostWith(t, hcs[i], s.url, h, body)
			}()
		}
		warm.Wait()
	}
	results := make([]coreHTTP, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			params := map[string]any{"name": "gate__echo", "arguments": args}
			for k, v := range retry {
				params[k] = v
			}
			h, body := coreModern("erin-token", "tools/call", "gate__echo", params, true)
			<-start
			r := i % len(f.replicas)
			results[i] = storePostWith(t, hcs[r], f.replicas[r].url, h, body)
		}()
	}
	close(start)
	wg.Wait()
	served := 0
	for i, r := range results {
		switch {
		case seenOnce(r, msg):
			served++
		case r.isError() && strings.Contains(r.text(), "already used"):
		default:
			t.Errorf("retry %d (replica %d): neither served once nor refused as used (status %d): %s", i, i%len(f.replicas), r.status, r.body)
		}
	}
	if served != 1 {
		t.Fatalf("the request state was redeemed %d times across replicas, want once", served)
	}
	again := storeCall(t, f.replicas[1], "erin-token", "", "gate__echo", args, nil)
	r := storeCall(t, f.replicas[2], "erin-token", "", "gate__echo", args, answered(again, "allow_once"))
	if r.isError() || r.text() != "echo: "+msg+" (seen 2)" {
		t.Fatalf("a fresh approval of the same message: want the upstream's second run, got: %s", r.body)
	}
}

// storeTaintAcrossReplicas: in one 2026-07-28 conversation, private data
// read via A and untrusted content seen via A (or via B) make the
// exfiltrating call via B (or via C) a trifecta deny, and the upstream
// never runs it; another conversation on B is not tainted.
func storeTaintAcrossReplicas(t *testing.T, f *storeFleet) {
	a, b, c := f.replicas[0], f.replicas[1], f.replicas[2]
	leg := func(s *opsServe, conv, tool string, args map[string]any) {
		t.Helper()
		if r := storeCall(t, s, "alice-token", conv, tool, args, nil); r.isError() || asked(r) {
			t.Fatalf("%s in %s: %s", tool, conv, r.body)
		}
	}
	denied := func(s *opsServe, conv, msg string) {
		t.Helper()
		r := storeCall(t, s, "alice-token", conv, "tri__echo", map[string]any{"message": msg}, nil)
		if !r.isError() || !strings.Contains(r.text(), "lethal_trifecta") {
			t.Fatalf("the exfiltrating call in %s: want a trifecta deny, got: %s", conv, r.body)
		}
		// The upstream never ran it: its first echo of msg is this one.
		if r := storeCall(t, s, "alice-token", "", "up__echo", map[string]any{"message": msg}, nil); !seenOnce(r, msg) {
			t.Fatalf("the denied call reached the upstream: %s", r.body)
		}
	}
	leg(a, "taint-1", "tri__big", map[string]any{"n": 8})
	leg(a, "taint-1", "tri__headers", nil)
	denied(b, "taint-1", "exfil-1")

	leg(a, "taint-2", "tri__big", map[string]any{"n": 8})
	leg(b, "taint-2", "tri__headers", nil)
	denied(c, "taint-2", "exfil-2")

	if r := storeCall(t, b, "alice-token", "clean", "tri__echo", map[string]any{"message": "clean-1"}, nil); !seenOnce(r, "clean-1") {
		t.Fatalf("an untainted conversation on B was refused: %s", r.body)
	}
}

// 1000 sessions (half 2025-11-25 sessions, half 2026-07-28 stateless
// clients), spread round-robin over three replicas on one Postgres
// database, each make two allowed calls, all at once: every call is
// answered with its own echo, which the upstream ran exactly once, and no
// answer is delivered twice.
func TestAThousandConcurrentSessionsAcrossReplicasLoseNoCallAndAnswerNoneTwice(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("1000 sessions: skipped with -short")
	}
	f := newStoreFleet(t, pgtest.Shared(t).URL)
	f.startN(t, 3)
	const sessions, calls = 1000, 2
	hcs := make([]*http.Client, len(f.replicas))
	for i := range hcs {
		hcs[i] = benchHTTPClient(sessions / len(f.replicas))
	}
	auth := transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer alice-token"})
	clients := make([]*client.Client, sessions)
	t0 := time.Now()
	openAll(t, sessions, func(i int) error {
		era := legacyEra
		if i%2 == 1 {
			era = modernEra
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		r := i % len(f.replicas)
		c, err := openBenchSession(ctx, f.replicas[r].url, hcs[r], era, auth)
		clients[i] = c
		return err
	})
	t.Cleanup(func() {
		for _, c := range clients {
			if c != nil {
				_ = c.Close()
			}
		}
	})
	opened := time.Since(t0)
	l := &benchLoad{c: benchCase{name: "fleet", tool: "up__echo"}}
	l.reset()
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range calls {
				l.call(i, c)
			}
		}()
	}
	t1 := time.Now()
	close(start)
	wg.Wait()
	t.Logf("%d sessions opened in %s; %d calls answered in %s", sessions, opened.Round(time.Millisecond), sessions*calls, time.Since(t1).Round(time.Millisecond))
	if l.errs != 0 {
		t.Fatalf("%d of %d calls were lost or answered wrong; the first: %s", l.errs, sessions*calls, l.firstErr)
	}
	if n := l.twice(); n != 0 {
		t.Fatalf("%d calls were answered more than once", n)
	}
	if len(l.answers) != sessions*calls {
		t.Fatalf("%d distinct answers for %d calls", len(l.answers), sessions*calls)
	}
	// Server side too: the replicas decided each call once between them,
	// each its share (their audit logs are written in batches: wait).
	var per []int
	eventually(t, 20*time.Second, "every call's check record in the replicas' audit logs", func() bool {
		per = per[:0]
		sum := 0
		for _, s := range f.replicas {
			n := storeCountChecks(t, s.audit, "up", "echo")
			per = append(per, n)
			sum += n
		}
		return sum >= sessions*calls
	})
	sum := 0
	for i, n := range per {
		sum += n
		if n < sessions*calls/len(f.replicas)/2 {
			t.Errorf("replica %d decided %d of the calls: the load was not spread", i, n)
		}
	}
	if sum != sessions*calls {
		t.Fatalf("the replicas decided %d calls (%v), want %d", sum, per, sessions*calls)
	}
}

// storeCountChecks counts the check records of server's tool in the
// audit log at path.
func storeCountChecks(t testing.TB, path, server, tool string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		var r struct {
			Event    string `json:"event"`
			Decision struct {
				Server string `json:"server"`
				Tool   string `json:"tool"`
			} `json:"decision"`
		}
		if json.Unmarshal([]byte(line), &r) == nil && r.Event == "check" && r.Decision.Server == server && r.Decision.Tool == tool {
			n++
		}
	}
	return n
}

// openAll runs open(i) for i < n, 32 at a time, and fails on the first
// error.
func openAll(t *testing.T, n int, open func(i int) error) {
	t.Helper()
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := open(i); err != nil {
				errs <- fmt.Errorf("session %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		t.Fatalf("opening %d sessions: %v (and %d more failed)", n, err, len(errs))
	}
}
