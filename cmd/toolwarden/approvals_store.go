package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
)

// toolwarden approvals on a shared store (--store or $TOOLWARDEN_STORE):
// the same subcommands as on the file, over store.Grants, store.Revoke
// and store.AddGrant. A store keeps every grant with an id and a scope,
// and keeps revoked ones as history.

// storeOnlyFlags are the flags that mean something only on a store; list
// --all (revoked ones too) is one of them, revoke --all is not.
var storeOnlyFlags = map[string]bool{"id": true, "scope": true, "by": true}

// storeFilterFlags defines the filters only a store has.
func (a *approvalsCmd) storeFilterFlags() {
	a.fs.StringVar(&a.id, "id", "", "with --store: only this approval (its id, or a prefix of at least 8 characters)")
	a.fs.StringVar(&a.scope, "scope", "", "with --store: only approvals of this scope: principal:NAME, group:NAME, team or local")
}

func (a *approvalsCmd) byFlag(what string) {
	a.fs.StringVar(&a.by, "by", "", "with --store: "+what+" (default: the OS user)")
}

// onStore runs sub on the store named by --store or $TOOLWARDEN_STORE,
// if one is; done is false when none is (the file form runs).
func (a *approvalsCmd) onStore(sub approvalsSub) (code int, done bool) {
	url, err := resolveStore(a.storeFlag, false)
	if err != nil {
		fmt.Fprintln(a.e.stderr, "toolwarden approvals:", err)
		return exitError, true
	}
	if url == "" {
		if bad := a.storeOnlyGiven(sub); bad != "" {
			return a.fs.usageError("--%s works on a shared store: give --store URL (or set $%s)", bad, storeEnv), true
		}
		return 0, false
	}
	if a.path != "" {
		return a.fs.usageError("%v", errStoreAndApprovals), true
	}
	if sub.runStore == nil {
		fmt.Fprintf(a.e.stderr, "toolwarden approvals %s: a shared store keeps every approval as history and has no %s: `toolwarden approvals revoke --all --store URL` revokes every approval\n", sub.name, sub.name)
		return exitUsage, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := openStore(ctx, url, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintln(a.e.stderr, "toolwarden approvals:", err)
		return exitError, true
	}
	defer st.Close()
	return sub.runStore(a, st), true
}

// storeOnlyGiven names a store-only flag given on the command line, "" if
// none was.
func (a *approvalsCmd) storeOnlyGiven(sub approvalsSub) string {
	bad := ""
	a.fs.Visit(func(f *flag.Flag) {
		if bad == "" && (storeOnlyFlags[f.Name] || sub.name == "list" && f.Name == "all") {
			bad = f.Name
		}
	})
	return bad
}

// storeFilter is the command's filters as a store filter (without --id,
// which may be a prefix: see matchID).
func (a *approvalsCmd) storeFilter() (store.GrantFilter, error) {
	f := store.GrantFilter{Server: a.server, Tool: a.tool, Hash: a.hash}
	if a.scope != "" {
		sc, err := parseGrantScope(a.scope)
		if err != nil {
			return f, err
		}
		f.Scope = sc
	}
	return f, nil
}

// matchID keeps the grants whose id begins with --id (all when it is
// not given).
func (a *approvalsCmd) matchID(gs []session.SharedGrant) []session.SharedGrant {
	if a.id == "" {
		return gs
	}
	var out []session.SharedGrant
	for _, g := range gs {
		if strings.HasPrefix(g.ID, strings.ToLower(a.id)) {
			out = append(out, g)
		}
	}
	return out
}

// parseGrantScope reads --scope: principal:NAME, group:NAME, team or
// local (the calls of wrap, proxy, the hook and the sdk, which have no
// caller; never serve's).
func parseGrantScope(s string) (session.GrantScope, error) {
	kind, name, _ := strings.Cut(s, ":")
	sc := session.GrantScope{Kind: kind, Name: name}
	switch {
	case (kind == session.ScopeTeam || kind == session.ScopeLocal) && name == "":
		return sc, nil
	case (kind == session.ScopePrincipal || kind == session.ScopeGroup) && name != "":
		return sc, nil
	}
	return session.GrantScope{}, fmt.Errorf("--scope %q: say principal:NAME, group:NAME, team or local", s)
}

func scopeText(sc session.GrantScope) string {
	if sc.Name == "" {
		return sc.Kind
	}
	return sc.Kind + ":" + sc.Name
}

// who is --by, else the OS user running the command.
func (a *approvalsCmd) who() string {
	if a.by != "" {
		return a.by
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := a.e.getenv("USER"); u != "" {
		return u
	}
	return "cli"
}

func storeApprovalsList(a *approvalsCmd, st *store.Store) int {
	e := a.e
	f, err := a.storeFilter()
	if err != nil {
		return a.fs.usageError("%v", err)
	}
	f.Revoked = a.history
	grants, err := st.Grants(context.Background(), f)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
		return exitError
	}
	grants = a.matchID(grants)
	if a.asJSON {
		if grants == nil {
			grants = []session.SharedGrant{}
		}
		b, _ := json.MarshalIndent(grants, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	if len(grants) == 0 {
		fmt.Fprintf(e.stdout, "no approvals in %s\n", st.URL())
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	head := "ID\tSCOPE\tSERVER\tTOOL\tAPP\tDEFINITION\tARGUMENTS\tGRANTED BY\tGRANTED"
	if a.history {
		head += "\tREVOKED BY\tREVOKED"
	}
	fmt.Fprintln(tw, head)
	for _, g := range grants {
		app := g.Key.App
		if g.Key.Connector != "" {
			app += " (connector " + g.Key.Connector + ")"
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", short(g.ID), scopeText(g.Scope), g.Key.Server, g.Key.Tool, app,
			short(g.Key.Hash), argsText(g), orDash(g.GrantedBy), g.GrantedAt.Local().Format(time.DateTime))
		if a.history {
			if g.RevokedAt.IsZero() {
				row += "\t-\t-"
			} else {
				row += "\t" + orDash(g.RevokedBy) + "\t" + g.RevokedAt.Local().Format(time.DateTime)
			}
		}
		fmt.Fprintln(tw, row)
	}
	tw.Flush()
	return exitOK
}

// argsText is the arguments a grant covers, on one short line.
func argsText(g session.SharedGrant) string {
	if g.ArgsDigest == "" {
		return "any"
	}
	p := strings.Join(strings.Fields(g.ArgsPreview), " ")
	if p == "" {
		p = "digest " + short(g.ArgsDigest)
	}
	if r := []rune(p); len(r) > 40 {
		p = string(r[:39]) + "…"
	}
	return p
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func storeApprovalsRevoke(a *approvalsCmd, st *store.Store) int {
	e := a.e
	ctx := context.Background()
	f, err := a.storeFilter()
	if err != nil {
		return a.fs.usageError("%v", err)
	}
	if f == (store.GrantFilter{}) && a.id == "" && !a.all {
		return a.fs.usageError("say what to revoke (--id, --server, --tool, --hash, --scope) or pass --all")
	}
	if a.id != "" && len(a.id) < 8 {
		return a.fs.usageError("--id %q is too short: give at least 8 characters of it (toolwarden approvals list --store ... shows them)", a.id)
	}
	// What the filters select now, so that the audit names each grant
	// and an --id prefix resolves to one grant.
	live, err := st.Grants(ctx, f)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
		return exitError
	}
	targets := a.matchID(live)
	if a.id != "" && len(targets) > 1 {
		fmt.Fprintf(e.stderr, "toolwarden approvals revoke: --id %s matches %d approvals; give more of it\n", a.id, len(targets))
		return exitError
	}
	if len(targets) == 0 {
		fmt.Fprintln(e.stderr, "toolwarden approvals revoke: no approval matched")
		return exitError
	}
	by := a.who()
	if a.id != "" {
		f = store.GrantFilter{ID: targets[0].ID}
	}
	f.All = a.all
	n, err := st.Revoke(ctx, f, by)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
		return exitError
	}
	if n == 0 {
		fmt.Fprintln(e.stderr, "toolwarden approvals revoke: no approval matched (revoked meanwhile?)")
		return exitError
	}
	a.auditStoreRevoked(st, targets, by)
	fmt.Fprintf(e.stdout, "revoked %d approval(s) in %s\n", n, st.URL())
	return exitOK
}

func storeApprovalsAdd(a *approvalsCmd, st *store.Store) int {
	e := a.e
	if a.server == "" || a.tool == "" || len(a.hash) != 64 || a.scope == "" {
		return a.fs.usageError("--server, --tool, the full 64-digit --hash and --scope (principal:NAME, group:NAME, team or local) are required with a store")
	}
	sc, err := parseGrantScope(a.scope)
	if err != nil {
		return a.fs.usageError("%v", err)
	}
	app := a.app
	if app == "" {
		app = a.server
	}
	now := time.Now().UTC()
	g, err := st.AddGrant(context.Background(), session.SharedGrant{
		Key:   session.ApprovalKey{App: app, Server: a.server, Connector: a.connector, Tool: a.tool, Hash: strings.ToLower(a.hash)},
		Scope: sc, GrantedBy: a.who(), GrantedAt: now,
	})
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
		return exitError
	}
	if !g.GrantedAt.Equal(now) {
		fmt.Fprintf(e.stdout, "already approved: %s/%s at definition %s for %s in %s (id %s, by %s)\n", a.server, a.tool, short(g.Key.Hash), scopeText(sc), st.URL(), g.ID, orDash(g.GrantedBy))
		return exitOK
	}
	fmt.Fprintf(e.stdout, "approved %s/%s at definition %s for %s in %s (id %s)\n", a.server, a.tool, short(g.Key.Hash), scopeText(sc), st.URL(), g.ID)
	return exitOK
}

// storeRevoke is the audit payload of a revoke in a shared store: the
// file form's fields, the store and the grant.
type storeRevoke struct {
	audit.Revoke
	Store string             `json:"store"`
	Grant string             `json:"grant"`
	Scope session.GrantScope `json:"scope"`
}

// auditStoreRevoked records each revoked grant in the store's audit table
// (every replica's operators see it) and in the local audit log, as the
// file form does; neither failing undoes the revoke.
func (a *approvalsCmd) auditStoreRevoked(st *store.Store, revoked []session.SharedGrant, by string) {
	log, done := a.approvalsAudit()
	defer done()
	sink := st.AuditSink()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sink.Close(ctx); err != nil {
			fmt.Fprintf(a.e.stderr, "toolwarden approvals: warning: the revoke is not recorded in the store's audit: %v\n", err)
		}
	}()
	now := time.Now().UTC()
	for _, g := range revoked {
		k := g.Key
		rec := audit.Record{Time: now, Event: "revoke", By: by, Grant: &g.Scope, Decision: storeRevoke{
			Revoke: audit.Revoke{Server: k.Server, Tool: k.Tool, App: k.App, Connector: k.Connector, DefinitionHash: k.Hash, By: "cli"},
			Store:  st.URL(), Grant: g.ID, Scope: g.Scope,
		}}
		log.Write(rec)
		sink.ExportAuditContext(context.Background(), rec)
	}
}
