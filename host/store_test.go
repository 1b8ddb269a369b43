package host_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/store/pgtest"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// Hosts on one shared store are replicas of `serve` (or a developer's
// wrap and hook): what one learns or is told, the others decide by. Each
// test runs on both engines, each replica with a store handle of its own.

// storeEngine is one engine a test runs on: a fresh store's URL, and a
// way to run SQL on it behind the store's back (fault injection).
type storeEngine struct {
	name string
	url  func(t *testing.T) (url string, exec func(q string))
}

var storeEngines = []storeEngine{
	{"sqlite", func(t *testing.T) (string, func(string)) {
		path := filepath.Join(t.TempDir(), "store.db")
		return "sqlite:" + path, func(q string) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}},
	{"postgres", func(t *testing.T) (string, func(string)) {
		db := pgtest.Shared(t)
		return db.URL, func(q string) {
			if out, err := db.Cluster.Query(db.Name, q); err != nil {
				t.Fatalf("%s: %v %s", q, err, out)
			}
		}
	}},
}

func onEachStore(t *testing.T, f func(t *testing.T, url string, exec func(string))) {
	for _, e := range storeEngines {
		t.Run(e.name, func(t *testing.T) {
			url, exec := e.url(t)
			f(t, url, exec)
		})
	}
}

// openStore opens url as one replica's store handle, closed when the
// test ends.
func openStore(t *testing.T, url, replica string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url, store.Options{Replica: replica})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// replica is one host on the store at url, with a store handle of its own.
func replica(t *testing.T, url, name, toml string, s host.Settings) (*host.Host, *store.Store) {
	t.Helper()
	st := openStore(t, url, name)
	return testhost.New(t, toml, s.WithStore(st).WithPluginCacheDir(pluginCache)), st
}

func hasReason(d host.Decision, code string) bool {
	for _, r := range d.Reasons {
		if r.Code == code {
			return true
		}
	}
	return false
}

// The lethal trifecta across replicas: the session read private data and
// untrusted content through A; its next call, an exfiltrating one, reaches
// B, which must deny it. B never saw either leg itself.
func TestTaintSetThroughOneReplicaDeniesTheExfiltratingCallOnAnother(t *testing.T) {
	onEachStore(t, func(t *testing.T, url string, _ func(string)) {
		toml := strings.Replace(trifectaConfig, "%s", "deny", 1)
		a, _ := replica(t, url, "a", toml, host.Defaults())
		b, _ := replica(t, url, "b", toml, host.Defaults())
		ctx := context.Background()
		readNotes := tool(t, `{"name":"read_notes","annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
		fetch := tool(t, `{"name":"fetch","annotations":{"readOnlyHint":true,"openWorldHint":true}}`)
		send := tool(t, `{"name":"send_email","annotations":{"destructiveHint":false,"openWorldHint":true}}`)
		sendCall := host.Call{Session: "s", Server: "mail", Tool: send}
		if d := b.Check(ctx, sendCall); d.Decision != host.Ask {
			t.Fatalf("untainted send through B: %s %+v", d.Decision, d.Reasons)
		}
		for _, c := range []host.Call{{Session: "s", Server: "notes", Tool: readNotes}, {Session: "s", Server: "web", Tool: fetch}} {
			d := a.Check(ctx, c)
			if d.Decision != host.Allow {
				t.Fatalf("%s through A: %s %+v", c.Tool.Name, d.Decision, d.Reasons)
			}
			a.ObserveAfter(ctx, c, &d, host.Result{Text: "ok"}) // serve's way: the result is answered at once
		}
		d := b.Check(ctx, sendCall)
		if d.Decision != host.Deny || !hasReason(d, "lethal_trifecta") {
			t.Fatalf("exfiltrating send through B after A's taint: %s %+v", d.Decision, d.Reasons)
		}
		for _, l := range []string{"private_data_seen", "untrusted_content_seen"} {
			if !b.Session("s").HasLabel(l) {
				t.Errorf("B's session lacks %s: %v", l, b.Session("s").Labels())
			}
		}
	})
}

const grantConfig = `
[mcp_servers.fs]
command = "fs-mcp"
`

// An "always" answered through A covers the same caller's calls through
// B, in any session, and no other caller's; a revoke through the store is
// seen by B's very next call.
func TestAnAlwaysGrantedThroughOneReplicaHoldsOnAnotherUntilRevoked(t *testing.T) {
	onEachStore(t, func(t *testing.T, url string, _ func(string)) {
		a, sa := replica(t, url, "a", grantConfig, host.Defaults())
		b, _ := replica(t, url, "b", grantConfig, host.Defaults())
		ctx := context.Background()
		wf := tool(t, writeFile)
		call := func(sess string) host.Call {
			return host.Call{Session: sess, Server: "fs", Tool: wf, Arguments: json.RawMessage(`{"path":"/repo/a"}`)}
		}
		bind(t, a, "a1", alice)
		bind(t, b, "b1", alice)
		bind(t, b, "b2", mallory)
		d := a.Check(ctx, call("a1"))
		if d.Decision != host.Ask || !d.Rememberable {
			t.Fatalf("first call: %s rememberable=%v", d.Decision, d.Rememberable)
		}
		if err := a.Approve("a1", &d, host.Always); err != nil {
			t.Fatal(err)
		}
		d = b.Check(ctx, call("b1"))
		if d.Decision != host.Allow || d.Reasons[0].Code != policy.CodeRemembered ||
			!strings.Contains(d.Reasons[0].Message, "shared "+sa.Engine()+" store") || !strings.Contains(d.Reasons[0].Message, `"alice"`) {
			t.Fatalf("alice through B: %s %+v", d.Decision, d.Reasons)
		}
		if d := b.Check(ctx, call("b2")); d.Decision != host.Ask {
			t.Errorf("mallory through B is covered by alice's grant: %s %+v", d.Decision, d.Reasons)
		}
		if d := b.Check(ctx, call("local")); d.Decision != host.Ask {
			t.Errorf("a session with no caller is covered by alice's grant: %s", d.Decision)
		}
		n, err := sa.Revoke(ctx, store.GrantFilter{Server: "fs", Tool: "write_file"}, "admin")
		if err != nil || n != 1 {
			t.Fatalf("revoke: %d %v", n, err)
		}
		if d := b.Check(ctx, call("b1")); d.Decision != host.Ask {
			t.Fatalf("B's next call after the revoke: %s %+v", d.Decision, d.Reasons)
		}
	})
}

// A local front end (wrap, proxy, the hook, the sdk) has no caller: its
// "always" is a local grant, seen by the developer's other local
// processes on the store.
func TestAnAlwaysWithoutACallerCoversTheOtherLocalFrontEndsOfTheStore(t *testing.T) {
	onEachStore(t, func(t *testing.T, url string, _ func(string)) {
		a, sa := replica(t, url, "wrap", grantConfig, host.Defaults())
		b, _ := replica(t, url, "hook", grantConfig, host.Defaults())
		ctx := context.Background()
		c := host.Call{Session: "w", Server: "fs", Tool: tool(t, writeFile), Arguments: json.RawMessage(`{"path":"/x"}`)}
		d := a.Check(ctx, c)
		if err := a.Approve("w", &d, host.Always); err != nil {
			t.Fatal(err)
		}
		gs, err := sa.Grants(ctx, store.GrantFilter{})
		if err != nil || len(gs) != 1 || gs[0].Scope != (session.GrantScope{Kind: session.ScopeLocal}) {
			t.Fatalf("grants: %+v %v", gs, err)
		}
		c.Session = "h"
		if d := b.Check(ctx, c); d.Decision != host.Allow {
			t.Fatalf("the other process: %s %+v", d.Decision, d.Reasons)
		}
	})
}

// The attack: a developer's local wrap shares a store with `serve`. Its
// caller-less "always" must not open the tool to serve's callers (who
// always have a name), neither a fresh one on another replica nor one
// on the very host that made the grant.
func TestAnAlwaysWithoutACallerDoesNotCoverAServeCallerOnTheStore(t *testing.T) {
	onEachStore(t, func(t *testing.T, url string, _ func(string)) {
		local, _ := replica(t, url, "wrap", grantConfig, host.Defaults())
		serve, _ := replica(t, url, "serve", grantConfig, host.Defaults())
		ctx := context.Background()
		c := host.Call{Session: "w", Server: "fs", Tool: tool(t, writeFile), Arguments: json.RawMessage(`{"path":"/x"}`)}
		d := local.Check(ctx, c)
		if err := local.Approve("w", &d, host.Always); err != nil {
			t.Fatal(err)
		}
		for _, h := range []struct {
			name string
			h    *host.Host
		}{{"another replica", serve}, {"the granting host", local}} {
			sid := "mallory-" + h.name
			if err := h.h.SetCaller(sid, host.Caller{Name: "mallory", Groups: []string{"dev"}}); err != nil {
				t.Fatal(err)
			}
			c.Session = sid
			if d := h.h.Check(ctx, c); d.Decision != host.Ask {
				t.Errorf("%s: a serve caller's call after a local always: %s %+v (want ask)", h.name, d.Decision, d.Reasons)
			}
		}
		c.Session = "w2"
		if d := serve.Check(ctx, c); d.Decision != host.Allow {
			t.Errorf("a caller-less session on the other host: %s %+v (the local grant should cover it)", d.Decision, d.Reasons)
		}
	})
}

// A local grant names no one with a caller: asked for one explicitly for
// a session that has a caller, ApproveBy refuses and stores nothing.
func TestALocalGrantForASessionWithACallerIsRefused(t *testing.T) {
	onEachStore(t, func(t *testing.T, url string, _ func(string)) {
		h, st := replica(t, url, "serve", grantConfig, host.Defaults())
		ctx := context.Background()
		if err := h.SetCaller("s", host.Caller{Name: "carol"}); err != nil {
			t.Fatal(err)
		}
		c := host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile), Arguments: json.RawMessage(`{"path":"/x"}`)}
		d := h.Check(ctx, c)
		err := h.ApproveBy("s", &d, host.Always, host.Caller{Name: "carol"}, session.GrantScope{Kind: session.ScopeLocal})
		if err == nil || !strings.Contains(err.Error(), "local") {
			t.Fatalf("ApproveBy with a local scope for a serve caller: %v", err)
		}
		if gs, err := st.Grants(ctx, store.GrantFilter{}); err != nil || len(gs) != 0 {
			t.Fatalf("grants after the refusal: %+v %v", gs, err)
		}
	})
}

// A grant bound to arguments covers a call with exactly those arguments
// (however they are spelled) and no other.
func TestAnArgsBoundGrantCoversOnlyThoseArguments(t *testing.T) {
	onEachStore(t, func(t *testing.T, url string, _ func(string)) {
		b, sb := replica(t, url, "b", grantConfig, host.Defaults())
		ctx := context.Background()
		wf := tool(t, writeFile)
		call := func(args string) host.Call {
			return host.Call{Session: "s", Server: "fs", Tool: wf, Arguments: json.RawMessage(args)}
		}
		d := b.Check(ctx, call(`{"path":"/repo/README.md"}`))
		if d.Decision != host.Ask {
			t.Fatalf("before the grant: %s", d.Decision)
		}
		digest, err := session.ArgsDigest(json.RawMessage(`{"path":"/repo/README.md"}`))
		if err != nil {
			t.Fatal(err)
		}
		key := session.ApprovalKey{App: d.App, Server: d.Server, Connector: d.Connector, Tool: d.Tool, Hash: d.DefinitionHash}
		if _, err := sb.AddGrant(ctx, session.SharedGrant{Key: key, Scope: session.GrantScope{Kind: session.ScopeTeam},
			ArgsDigest: digest, ArgsPreview: `{"path":"/repo/README.md"}`, GrantedBy: "admin"}); err != nil {
			t.Fatal(err)
		}
		if d := b.Check(ctx, call(` { "path" : "\/repo/README.md" } `)); d.Decision != host.Allow {
			t.Errorf("the granted arguments, spelled otherwise: %s %+v", d.Decision, d.Reasons)
		}
		for _, other := range []string{`{"path":"/etc/passwd"}`, `{"path":"/repo/README.md","mode":"append"}`, `{}`} {
			if d := b.Check(ctx, call(other)); d.Decision != host.Ask {
				t.Errorf("%s is covered by a grant for other arguments: %s", other, d.Decision)
			}
		}
	})
}

// When the store cannot confirm its grants are current (here: their
// revision cannot be read), remembered approvals are set aside: the call
// is asked, and says why. When it can again, the grant applies again.
func TestRememberedApprovalsAreSetAsideWhenTheStoreCannotConfirmItIsCurrent(t *testing.T) {
	onEachStore(t, func(t *testing.T, url string, exec func(string)) {
		a, _ := replica(t, url, "a", grantConfig, host.Defaults())
		ctx := context.Background()
		c := host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile), Arguments: json.RawMessage(`{"path":"/x"}`)}
		d := a.Check(ctx, c)
		if err := a.Approve("s", &d, host.Always); err != nil {
			t.Fatal(err)
		}
		c.Session = "t"
		if d := a.Check(ctx, c); d.Decision != host.Allow {
			t.Fatalf("granted: %s", d.Decision)
		}
		exec("ALTER TABLE tw_revision RENAME TO tw_revision_away")
		d = a.Check(ctx, c)
		if d.Decision != host.Ask || !hasReason(d, policy.CodeRememberedUnconfirmed) ||
			!strings.Contains(d.Prompt.Message, "cannot confirm it is current") {
			t.Fatalf("with the revision unreadable: %s %+v", d.Decision, d.Reasons)
		}
		exec("ALTER TABLE tw_revision_away RENAME TO tw_revision")
		if d := a.Check(ctx, c); d.Decision != host.Allow {
			t.Fatalf("once the revision reads again: %s %+v", d.Decision, d.Reasons)
		}
	})
}

// Postgres stopped mid-run: every call is denied and says why (nothing
// is allowed on state that may be stale); a taint observed meanwhile is
// logged as unsaved, kept, and saved by the session's next call once the
// server is back, where another replica then sees it.
func TestAStoreThatIsDownDeniesEveryCallAndRecoversWhenBack(t *testing.T) {
	cl := pgtest.Start(t)
	url := cl.URL(cl.CreateDB(t))
	var logs syncBuffer
	toml := strings.Replace(trifectaConfig, "%s", "deny", 1)
	a, _ := replica(t, url, "a", toml, host.Defaults().WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	b, _ := replica(t, url, "b", toml, host.Defaults())
	ctx := context.Background()
	readNotes := tool(t, `{"name":"read_notes","annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
	fetch := tool(t, `{"name":"fetch","annotations":{"readOnlyHint":true,"openWorldHint":true}}`)
	send := tool(t, `{"name":"send_email","annotations":{"destructiveHint":false,"openWorldHint":true}}`)
	notes := host.Call{Session: "s", Server: "notes", Tool: readNotes}
	web := host.Call{Session: "s", Server: "web", Tool: fetch}
	d := a.Check(ctx, notes)
	a.Observe(ctx, notes, &d, host.Result{Text: "ok"})
	dWeb := a.Check(ctx, web)
	if dWeb.Decision != host.Allow {
		t.Fatalf("fetch: %s", dWeb.Decision)
	}

	if err := cl.Stop(); err != nil {
		t.Fatal(err)
	}
	a.Observe(ctx, web, &dWeb, host.Result{Text: "ok"}) // the taint's second leg, with the store down
	if !strings.Contains(logs.String(), "not saved yet") {
		t.Errorf("an unsaved observation is not logged: %s", logs.String())
	}
	for _, h := range []*host.Host{a, b} {
		d := h.Check(ctx, host.Call{Session: "s", Server: "notes", Tool: readNotes})
		if d.Decision != host.Deny || !hasReason(d, policy.CodeStoreUnreachable) ||
			!strings.Contains(d.Reasons[0].Message, "shared store is unreachable") || !strings.Contains(d.Reasons[0].Message, "not made") {
			t.Fatalf("a call with the store down: %s %+v", d.Decision, d.Reasons)
		}
	}

	if err := cl.Start(); err != nil {
		t.Fatal(err)
	}
	// The calls made while it was down dropped the dead connections: the
	// first call after the restart connects afresh and is decided.
	if after := a.Check(ctx, notes); after.Decision != host.Allow {
		t.Fatalf("A's first call once the store is back: %s %+v", after.Decision, after.Reasons)
	}
	sendCall := host.Call{Session: "s", Server: "mail", Tool: send}
	dSend := b.Check(ctx, sendCall)
	if dSend.Decision != host.Deny || !hasReason(dSend, "lethal_trifecta") {
		t.Fatalf("B's exfiltrating call after A saved the taint observed while the store was down: %s %+v", dSend.Decision, dSend.Reasons)
	}
}

// Calls that change nothing save nothing: a counter is not worth a write.
func TestACallThatChangesNothingSavesNothing(t *testing.T) {
	onEachStore(t, func(t *testing.T, url string, _ func(string)) {
		a, sa := replica(t, url, "a", grantConfig, host.Defaults())
		ctx := context.Background()
		readFile := tool(t, `{"name":"read_file","annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
		c := host.Call{Session: "s", Server: "fs", Tool: readFile, Arguments: json.RawMessage(`{"path":"/x"}`)}
		if d := a.Check(ctx, c); d.Decision != host.Allow {
			t.Fatalf("%s", d.Decision)
		}
		// A row's first revision is the clock's (store/sessions.go): only
		// that it is saved, and does not move below, is checked.
		_, rev, changed, err := sa.LoadSession(ctx, "s", 0)
		if err != nil || !changed || rev <= 0 {
			t.Fatalf("the first call's pin is not saved: rev %d changed=%v err=%v", rev, changed, err)
		}
		for range 3 {
			a.Check(ctx, c)
		}
		if _, now, changed, err := sa.LoadSession(ctx, "s", rev); err != nil || changed {
			t.Fatalf("calls that changed nothing moved the revision to %d (err %v)", now, err)
		}
	})
}

// An approver answering another's ask (the team inbox) must be one by
// the rules in force; the audit record names them, and the grant covers
// the asker's calls.
func TestApproveByANonApproverIsRefusedAndAnApproversAnswerIsRecorded(t *testing.T) {
	onEachStore(t, func(t *testing.T, url string, _ func(string)) {
		var log syncBuffer
		a, _ := replica(t, url, "a", callerConfig, host.Defaults().WithAuditLog(&log))
		b, _ := replica(t, url, "b", callerConfig, host.Defaults())
		ctx := context.Background()
		rb := tool(t, rollback)
		bind(t, a, "lena1", lead)
		d := a.Check(ctx, callOf("lena1", "deploy", rb))
		if d.Decision != host.Ask || !d.Rememberable {
			t.Fatalf("lena's rollback: %s %+v", d.Decision, d.Reasons)
		}
		if err := a.ApproveBy("lena1", &d, host.Always, opsDave, session.GrantScope{}); !errors.Is(err, host.ErrNotApprover) {
			t.Fatalf("dave (not a lead) approving: %v", err)
		}
		if strings.Contains(log.String(), `"event":"approve"`) {
			t.Fatalf("a refused answer was recorded: %s", log.String())
		}
		lee := host.Caller{Name: "lee", Groups: []string{"leads"}}
		if err := a.ApproveBy("lena1", &d, host.Always, lee, session.GrantScope{}); err != nil {
			t.Fatalf("lee (a lead) approving: %v", err)
		}
		var rec struct {
			Event string              `json:"event"`
			By    string              `json:"by"`
			Grant *session.GrantScope `json:"grant"`
		}
		for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
			if strings.Contains(line, `"event":"approve"`) {
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
			}
		}
		if rec.By != "lee" || rec.Grant == nil || *rec.Grant != (session.GrantScope{Kind: session.ScopePrincipal, Name: "lena"}) {
			t.Errorf("approve record: %+v", rec)
		}
		bind(t, b, "lena2", lead)
		if d := b.Check(ctx, callOf("lena2", "deploy", rb)); d.Decision != host.Allow {
			t.Errorf("lena's rollback through B after lee's always: %s %+v", d.Decision, d.Reasons)
		}

		// No approvers named for deploy_app: only the asker answers.
		bind(t, a, "alice1", alice)
		d = a.Check(ctx, callOf("alice1", "deploy", tool(t, deployApp)))
		if err := a.ApproveBy("alice1", &d, host.Once, lead, session.GrantScope{}); !errors.Is(err, host.ErrNotApprover) {
			t.Errorf("another answering an ask with no approvers named: %v", err)
		}
		if err := a.ApproveBy("alice1", &d, host.Once, alice, session.GrantScope{}); err != nil {
			t.Errorf("the asker answering her own ask: %v", err)
		}
	})
}

// syncBuffer is a bytes.Buffer a logger and a test may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
