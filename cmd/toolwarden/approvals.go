package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolwarden/toolwarden/host/session"
)

func init() {
	register(command{name: "approvals", summary: "list, revoke, add or reset persistent (\"always\") approvals", run: runApprovals})
}

func approvalsUsage(e *env) {
	fmt.Fprintln(e.stderr, "usage: toolwarden approvals list   [--approvals F] [--server S] [--tool T] [--json]")
	fmt.Fprintln(e.stderr, "       toolwarden approvals revoke [--approvals F] [--server S] [--tool T] [--hash H] [--all]")
	fmt.Fprintln(e.stderr, "       toolwarden approvals add    [--approvals F] --server S --tool T --hash H [--app A] [--connector C]")
	fmt.Fprintln(e.stderr, "       toolwarden approvals reset  [--approvals F]")
	fmt.Fprintln(e.stderr)
	fmt.Fprintln(e.stderr, "An \"always\" approval covers one tool of one server at one exact definition (its")
	fmt.Fprintln(e.stderr, "SHA-256 definition hash): a changed tool is asked about again. --hash accepts a")
	fmt.Fprintln(e.stderr, "prefix of 8 or more hex digits for list and revoke.")
	fmt.Fprintln(e.stderr)
	fmt.Fprintln(e.stderr, "Every running wrap and proxy sees a change to the file before its next decision.")
	fmt.Fprintln(e.stderr, "A file that cannot be read grants nothing; list says why, and reset (or revoke")
	fmt.Fprintln(e.stderr, "--all) copies it to <file>.bak-<time> before starting an empty one.")
}

func runApprovals(e *env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		approvalsUsage(e)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	sub := args[0]
	fs := flag.NewFlagSet("approvals "+sub, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() { approvalsUsage(e); fs.PrintDefaults() }
	path := fs.String("approvals", "", "approvals file (default: "+displayApprovalsPath()+")")
	server := fs.String("server", "", "only this server ([mcp_servers.<name>] or wrap's --app)")
	tool := fs.String("tool", "", "only this tool (its upstream name, without <server>__)")
	hash := fs.String("hash", "", "only this definition hash (or a prefix of at least 8 hex digits)")
	all := fs.Bool("all", false, "revoke: every approval (needed when no filter is given)")
	asJSON := fs.Bool("json", false, "list: print JSON")
	app := fs.String("app", "", "add: the app (default: the server)")
	connector := fs.String("connector", "", "add: the connector id, for connector servers")
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "toolwarden approvals %s: unexpected argument %q\n", sub, fs.Arg(0))
		return exitUsage
	}
	file := *path
	if file == "" {
		p, err := defaultApprovalsPath()
		if err != nil {
			fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
			return exitError
		}
		file = p
	}
	if *hash != "" && !hexPrefix.MatchString(*hash) {
		fmt.Fprintf(e.stderr, "toolwarden approvals: --hash %q is not a hex definition hash (or a prefix of at least 8 hex digits)\n", *hash)
		return exitUsage
	}
	p, err := session.OpenPersistent(file)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
		return exitError
	}
	// The file's problems are this command's output, not log lines.
	p.SetLogger(slog.New(slog.DiscardHandler))
	match := func(g session.Grant) bool {
		return (*server == "" || g.Server == *server) &&
			(*tool == "" || g.Tool == *tool) &&
			(*hash == "" || strings.HasPrefix(g.Hash, strings.ToLower(*hash)))
	}

	switch sub {
	case "list", "ls":
		grants, err := p.List()
		if err != nil {
			fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
			return exitError
		}
		var shown []session.Grant
		for _, g := range grants {
			if match(g) {
				shown = append(shown, g)
			}
		}
		if *asJSON {
			if shown == nil {
				shown = []session.Grant{}
			}
			b, _ := json.MarshalIndent(shown, "", "  ")
			fmt.Fprintln(e.stdout, string(b))
			return exitOK
		}
		if len(shown) == 0 {
			fmt.Fprintf(e.stdout, "no approvals in %s\n", file)
			return exitOK
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tTOOL\tAPP\tDEFINITION\tGRANTED")
		for _, g := range shown {
			a := g.App
			if g.Connector != "" {
				a += " (connector " + g.Connector + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", g.Server, g.Tool, a, short(g.Hash), g.GrantedAt.Local().Format(time.DateTime))
		}
		tw.Flush()
		return exitOK

	case "revoke", "rm":
		if *server == "" && *tool == "" && *hash == "" && !*all {
			fmt.Fprintln(e.stderr, "toolwarden approvals revoke: say what to revoke (--server, --tool, --hash) or pass --all")
			return exitUsage
		}
		if bad := p.Err(); bad != nil {
			if !*all {
				fmt.Fprintln(e.stderr, "toolwarden approvals revoke:", bad)
				fmt.Fprintln(e.stderr, "toolwarden approvals revoke: the file cannot be read, so nothing can be revoked from it selectively; it grants nothing meanwhile. `toolwarden approvals revoke --all` or `toolwarden approvals reset` backs it up and starts an empty one.")
				return exitError
			}
			return resetApprovals(e, p, file)
		}
		n, err := p.Revoke(match)
		if err != nil {
			fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
			return exitError
		}
		if n == 0 {
			fmt.Fprintln(e.stderr, "toolwarden approvals revoke: no approval matched")
			return exitError
		}
		fmt.Fprintf(e.stdout, "revoked %d approval(s) from %s\n", n, file)
		return exitOK

	case "add":
		if *server == "" || *tool == "" || len(*hash) != 64 {
			fmt.Fprintln(e.stderr, "toolwarden approvals add: --server, --tool and the full 64-digit --hash are required (toolwarden prints them when a call needs approval)")
			return exitUsage
		}
		a := *app
		if a == "" {
			a = *server
		}
		k := session.ApprovalKey{App: a, Server: *server, Connector: *connector, Tool: *tool, Hash: strings.ToLower(*hash)}
		if err := p.Add(k, time.Now().UTC()); err != nil {
			fmt.Fprintln(e.stderr, "toolwarden approvals:", err)
			return exitError
		}
		fmt.Fprintf(e.stdout, "approved %s/%s at definition %s in %s\n", *server, *tool, short(k.Hash), file)
		return exitOK

	case "reset":
		if *server != "" || *tool != "" || *hash != "" {
			fmt.Fprintln(e.stderr, "toolwarden approvals reset: takes no filter (it revokes every approval); use revoke to remove some")
			return exitUsage
		}
		return resetApprovals(e, p, file)
	}
	fmt.Fprintf(e.stderr, "toolwarden approvals: unknown subcommand %q (list, revoke, add or reset)\n", sub)
	return exitUsage
}

// resetApprovals revokes every approval, copying the file aside first
// (whatever its state: a file this toolwarden cannot read may be a newer
// version's, or a hand edit worth keeping).
func resetApprovals(e *env, p *session.Persistent, file string) int {
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
	fmt.Fprintf(e.stdout, "revoked every approval: %s now holds none\n", file)
	return exitOK
}

var hexPrefix = regexp.MustCompile(`^[0-9a-fA-F]{8,64}$`)

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
