package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
)

func init() {
	register(command{name: "approvals", summary: "list, revoke, add or reset persistent (\"always\") approvals", run: runApprovals})
}

// approvalsAbout is what every approvals help ends with.
const approvalsAbout = `An "always" approval covers one tool of one server at one exact definition (its
SHA-256 definition hash): a changed tool is asked about again. --hash accepts a
prefix of 8 or more hex digits for list and revoke.

Every running wrap and proxy sees a change to the file before its next decision.
A file that cannot be read grants nothing; list says why, and reset (or revoke
--all) copies it to <file>.bak-<time> before starting an empty one.

With --store URL (or $TOOLWARDEN_STORE) the commands work on a shared store's
approvals instead (sqlite:PATH or postgres://...): each has an id and a scope
(principal:NAME, group:NAME, team, or local for the calls of wrap, proxy, the
hook and the sdk, never serve's: whose calls it covers), may be bound to
one set of arguments, and is never deleted: revoke records who revoked it
(--by, default the OS user) and list --all shows the revoked ones too. Every
process using the store sees a revoke or an add before its next decision that
would use it.`

// approvalsSub is one subcommand of approvals: its flags beyond --approvals
// and what it does with the opened file.
type approvalsSub struct {
	name, alias string
	summary     string
	synopsis    string
	flags       func(a *approvalsCmd)
	run         func(a *approvalsCmd, p *session.Persistent) int
	// runStore does the same on a shared store; nil when the subcommand
	// has no store form.
	runStore func(a *approvalsCmd, st *store.Store) int
}

var approvalsSubs = []approvalsSub{
	{
		name: "list", alias: "ls", summary: "list persistent approvals, or say why the file cannot be used",
		synopsis: "approvals list   [--approvals F | --store URL [--id ID] [--scope SCOPE] [--all]] [--server S] [--tool T] [--hash H] [--json]",
		flags: func(a *approvalsCmd) {
			a.filterFlags()
			a.storeFilterFlags()
			a.fs.BoolVar(&a.history, "all", false, "with --store: revoked approvals too, with who revoked them")
			a.fs.BoolVar(&a.asJSON, "json", false, "print JSON")
		},
		run:      approvalsList,
		runStore: storeApprovalsList,
	},
	{
		name: "revoke", alias: "rm", summary: "revoke the approvals a filter matches, or all of them",
		synopsis: "approvals revoke [--approvals F | --store URL [--id ID] [--scope SCOPE] [--by WHO]] [--server S] [--tool T] [--hash H] [--all]",
		flags: func(a *approvalsCmd) {
			a.filterFlags()
			a.storeFilterFlags()
			a.byFlag("who revokes (recorded in the store)")
			a.fs.BoolVar(&a.all, "all", false, "every approval (needed when no filter is given)")
		},
		run:      approvalsRevoke,
		runStore: storeApprovalsRevoke,
	},
	{
		name: "add", summary: "approve one tool at one definition, as answering \"always\" would",
		synopsis: "approvals add    [--approvals F | --store URL --scope SCOPE [--by WHO]] --server S --tool T --hash H [--app A] [--connector C]",
		flags: func(a *approvalsCmd) {
			a.filterFlags()
			a.fs.StringVar(&a.app, "app", "", "the app (default: the server)")
			a.fs.StringVar(&a.connector, "connector", "", "the connector id, for connector servers")
			a.fs.StringVar(&a.scope, "scope", "", "with --store: whose calls it covers: principal:NAME, group:NAME, team or local (required)")
			a.byFlag("who grants (recorded in the store)")
		},
		run:      approvalsAdd,
		runStore: storeApprovalsAdd,
	},
	{
		name: "reset", summary: "revoke every approval, backing the file up first",
		synopsis: "approvals reset  [--approvals F]",
		flags:    func(a *approvalsCmd) {},
		run: func(a *approvalsCmd, p *session.Persistent) int {
			return resetApprovals(a, p)
		},
	},
}

// approvalsCmd is one run of an approvals subcommand: its flags and the
// file it works on.
type approvalsCmd struct {
	e                  *env
	fs                 *cmdFlags
	path               string
	server, tool, hash string
	all, asJSON        bool
	app, connector     string
	audit              string
	file               string // path, or the default

	// The shared store's flags (approvals_store.go).
	storeFlag string
	id, scope string
	by        string
	history   bool
}

func (a *approvalsCmd) filterFlags() {
	a.fs.StringVar(&a.server, "server", "", "only this server ([mcp_servers.<name>] or wrap's --app)")
	a.fs.StringVar(&a.tool, "tool", "", "only this tool (its upstream name, without <server>__)")
	a.fs.StringVar(&a.hash, "hash", "", "only this definition hash (or a prefix of at least 8 hex digits)")
}

func (a *approvalsCmd) match(g session.Grant) bool {
	return (a.server == "" || g.Server == a.server) &&
		(a.tool == "" || g.Tool == a.tool) &&
		(a.hash == "" || strings.HasPrefix(g.Hash, strings.ToLower(a.hash)))
}

func approvalsUsage(w io.Writer) {
	fmt.Fprintf(w, "toolwarden approvals: %s\n\n", commands["approvals"].summary)
	for i, s := range approvalsSubs {
		prefix := "       "
		if i == 0 {
			prefix = "usage: "
		}
		fmt.Fprintf(w, "%stoolwarden %s\n", prefix, s.synopsis)
	}
	fmt.Fprintf(w, "\n%s\n\nRun toolwarden approvals <subcommand> --help for its flags.\n", approvalsAbout)
}

func runApprovals(e *env, args []string) int {
	if len(args) == 0 {
		approvalsUsage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		approvalsUsage(e.stdout)
		return exitOK
	}
	i := slices.IndexFunc(approvalsSubs, func(s approvalsSub) bool { return s.name == args[0] || s.alias != "" && s.alias == args[0] })
	if i < 0 {
		fmt.Fprintf(e.stderr, "toolwarden approvals: unknown subcommand %q: list, revoke, add or reset (see: toolwarden approvals --help)\n", args[0])
		return exitUsage
	}
	sub := approvalsSubs[i]
	a := &approvalsCmd{e: e}
	a.fs = newCmdFlags(e, "approvals "+sub.name, sub.synopsis, approvalsAbout)
	a.fs.Summary = sub.summary
	a.fs.StringVar(&a.path, "approvals", "", "approvals file (default: "+displayApprovalsPath()+")")
	if sub.name == "revoke" || sub.name == "reset" {
		a.fs.StringVar(&a.audit, "audit", "", auditFlagUsage+"; revokes are recorded there")
	}
	a.fs.StringVar(&a.storeFlag, "store", "", "a shared store instead of the file: sqlite:PATH or postgres://... (default: $"+storeEnv+")")
	sub.flags(a)
	if code, ok := a.fs.parse(args[1:]); !ok {
		return code
	}
	if code, ok := a.fs.noArgs(""); !ok {
		return code
	}
	if a.hash != "" && !hexPrefix().MatchString(a.hash) {
		return a.fs.usageError("--hash %q is not a hex definition hash (or a prefix of at least 8 hex digits)", a.hash)
	}
	if code, done := a.onStore(sub); done {
		return code
	}
	a.file = a.path
	if a.file == "" {
		f, err := defaultApprovalsPath()
		if err != nil {
			fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
			return exitError
		}
		a.file = f
	}
	p, err := session.OpenPersistent(a.file)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
		return exitError
	}
	// The file's problems are this command's output, not log lines.
	p.SetLogger(slog.New(slog.DiscardHandler))
	return sub.run(a, p)
}

func approvalsList(a *approvalsCmd, p *session.Persistent) int {
	e := a.e
	grants, err := p.List()
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
		return exitError
	}
	var shown []session.Grant
	for _, g := range grants {
		if a.match(g) {
			shown = append(shown, g)
		}
	}
	if a.asJSON {
		if shown == nil {
			shown = []session.Grant{}
		}
		b, _ := json.MarshalIndent(shown, "", "  ")
		fmt.Fprintln(e.stdout, string(b))
		return exitOK
	}
	if len(shown) == 0 {
		fmt.Fprintf(e.stdout, "no approvals in %s\n", a.file)
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tTOOL\tAPP\tDEFINITION\tGRANTED")
	for _, g := range shown {
		app := g.App
		if g.Connector != "" {
			app += " (connector " + g.Connector + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", g.Server, g.Tool, app, short(g.Hash), g.GrantedAt.Local().Format(time.DateTime))
	}
	tw.Flush()
	return exitOK
}

func approvalsRevoke(a *approvalsCmd, p *session.Persistent) int {
	e := a.e
	if a.server == "" && a.tool == "" && a.hash == "" && !a.all {
		return a.fs.usageError("say what to revoke (--server, --tool, --hash) or pass --all")
	}
	if bad := p.Err(); bad != nil {
		if !a.all {
			fmt.Fprintln(e.stderr, "toolwarden approvals revoke:", bad)
			fmt.Fprintln(e.stderr, "toolwarden approvals revoke: the file cannot be read, so nothing can be revoked from it selectively; it grants nothing meanwhile. `toolwarden approvals revoke --all` or `toolwarden approvals reset` backs it up and starts an empty one.")
			return exitError
		}
		return resetApprovals(a, p)
	}
	// The keys the file held when it was rewritten, as the match saw them.
	var revoked []session.ApprovalKey
	n, err := p.Revoke(func(g session.Grant) bool {
		if !a.match(g) {
			return false
		}
		revoked = append(revoked, g.ApprovalKey)
		return true
	})
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
		return exitError
	}
	if n == 0 {
		fmt.Fprintln(e.stderr, "toolwarden approvals revoke: no approval matched")
		return exitError
	}
	a.auditRevoked(revoked)
	fmt.Fprintf(e.stdout, "revoked %d approval(s) from %s\n", n, a.file)
	return exitOK
}

func approvalsAdd(a *approvalsCmd, p *session.Persistent) int {
	e := a.e
	if a.server == "" || a.tool == "" || len(a.hash) != 64 {
		return a.fs.usageError("--server, --tool and the full 64-digit --hash are required (toolwarden prints them when a call needs approval)")
	}
	app := a.app
	if app == "" {
		app = a.server
	}
	k := session.ApprovalKey{App: app, Server: a.server, Connector: a.connector, Tool: a.tool, Hash: strings.ToLower(a.hash)}
	if err := p.Add(k, time.Now().UTC()); err != nil {
		fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
		return exitError
	}
	fmt.Fprintf(e.stdout, "approved %s/%s at definition %s in %s\n", a.server, a.tool, short(k.Hash), a.file)
	return exitOK
}

// resetApprovals revokes every approval, copying the file aside first
// (whatever its state: a file this toolwarden cannot read may be a newer
// version's, or a hand edit worth keeping).
func resetApprovals(a *approvalsCmd, p *session.Persistent) int {
	e, file := a.e, a.file
	bad := p.Err()
	backup, err := p.Reset(time.Now())
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
		return exitError
	}
	if bad != nil {
		fmt.Fprintf(e.stderr, "toolwarden approvals: %s could not be read (%v)\n", file, bad)
	}
	if backup != "" {
		fmt.Fprintf(e.stdout, "backed up %s to %s\n", file, backup)
	}
	a.auditRevokedAll()
	fmt.Fprintf(e.stdout, "revoked every approval: %s now holds none\n", file)
	return exitOK
}

// hexPrefix is compiled on first use: every toolwarden process, a hook
// event above all, would otherwise pay for it at start ({8,64} makes a
// large program).
var hexPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9a-fA-F]{8,64}$`) })

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
