package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/catalog"
	"github.com/toolwarden/toolwarden/internal/hook"
	"github.com/toolwarden/toolwarden/internal/policy"
)

func init() {
	register(command{name: "tools", summary: toolsSummary, run: runTools})
}

const (
	toolsSummary      = "the tool catalog hooks read: tools sync (list the agents' MCP servers), tools list"
	toolsSyncSynopsis = "tools sync [--agent claude,gemini,codex] [--config F]... [--project DIR] [--trust-project] [--catalog DIR] [--timeout D]"
	toolsListSynopsis = "tools list [--catalog DIR] [SERVER...]"
	toolsAbout        = `An agent's hook event names an MCP tool but not its annotations. The tool catalog
(one file per server, by name and identity, under the user cache dir, or
$TOOLWARDEN_CATALOG) holds each server's tool definitions as last listed, so that ` + "`toolwarden hook`" + ` decides with them.
wrap and proxy write it as they list; "tools sync" starts every MCP server the
agents' own configs name (Claude Code: ~/.claude.json, .mcp.json; Gemini CLI:
~/.gemini/settings.json, .gemini/settings.json; Codex: ~/.codex/config.toml) and
lists it; "tools list" shows what the catalog holds. The project's own servers
(.mcp.json, .gemini/settings.json) came with the repository: they are started only
once the agent was told to trust them, or with --trust-project. sync exits 1 when
a server could not be listed.`
)

func toolsUsage(w io.Writer) {
	fmt.Fprintln(w, "toolwarden tools: "+toolsSummary)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: toolwarden "+toolsSyncSynopsis)
	fmt.Fprintln(w, "       toolwarden "+toolsListSynopsis)
	fmt.Fprintln(w)
	fmt.Fprintln(w, toolsAbout)
}

func runTools(e *env, args []string) int {
	if len(args) == 0 {
		toolsUsage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "sync":
		return runToolsSync(e, args[1:])
	case "list":
		return runToolsList(e, args[1:])
	case "-h", "--help", "help":
		toolsUsage(e.stdout)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "toolwarden tools: unknown subcommand %q (want sync or list; see: toolwarden tools --help)\n", args[0])
	return exitUsage
}

func runToolsSync(e *env, args []string) int {
	fs := newCmdFlags(e, "tools sync", toolsSyncSynopsis, toolsAbout)
	fs.Summary = "start the MCP servers the agents' configs name and write their tool lists to the catalog"
	var configs cli.StringList
	fs.Var(&configs, "config", "also list the [mcp_servers.*] of this toolwarden config (repeatable; default: the system and user config files that exist)")
	agents := fs.String("agent", "claude,gemini,codex", "whose MCP configs to read: claude, gemini, codex, comma separated")
	project := fs.String("project", "", "the project folder whose .mcp.json and .gemini/settings.json count (default: the current folder)")
	timeout := fs.Duration("timeout", 30*time.Second, "how long one server may take to start and list its tools")
	trustProject := fs.Bool("trust-project", false, "also start the project's own servers (.mcp.json, .gemini/settings.json) that the agent has not been told to trust")
	catalogDir := cli.CatalogFlag(fs.FlagSet, e.getenv)
	if code, ok := fs.ParseArgs(args); !ok {
		return code
	}
	if code, ok := fs.NoArgs("servers come from the agents' configs and --config"); !ok {
		return code
	}
	dir, err := catalogDir()
	if err != nil || dir == "" {
		fmt.Fprintf(e.stderr, "toolwarden tools sync: no catalog folder (%v); pass --catalog\n", err)
		return exitError
	}
	places, err := syncPlaces(e, *project)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden tools sync:", err)
		return exitError
	}
	places.TrustProject = *trustProject

	servers, failed := syncServers(e, places, *agents, configPaths(e, configs))
	if failed < 0 {
		return exitUsage
	}
	if len(servers) == 0 {
		fmt.Fprintf(e.stdout, "no MCP servers found in the %s configs (for %s) or the given --config files\n", *agents, places.Project)
		if failed > 0 {
			return exitError
		}
		return exitOK
	}

	// A project's own config came with the repository: its servers run
	// only where the agent itself would run them.
	var trusted []hook.Server
	for _, s := range servers {
		if s.Untrusted != "" && !*trustProject {
			fmt.Fprintf(e.stdout, "skip %s: %s\n", policy.OneLine(s.Name), s.Untrusted)
			fmt.Fprintf(e.stdout, "     from %s\n", policy.OneLine(s.Source))
			continue
		}
		trusted = append(trusted, s)
	}
	// Held to the admin's server allow-lists by the hook's own judge.
	if servers, err = cli.AdmitToSync(e.stdout, e.getenv, places.Project, trusted); err != nil {
		fmt.Fprintln(e.stderr, "toolwarden tools sync:", err)
		return exitError
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results := listAll(ctx, servers, *timeout)
	// Each entry is keyed by name and identity: a name configured twice
	// keeps both lists.
	for _, r := range results {
		if r.Err != nil {
			failed++
			fmt.Fprintf(e.stdout, "FAIL %s: %s\n", policy.OneLine(r.Server.Name), policy.OneLine(r.Err.Error()))
			fmt.Fprintf(e.stdout, "     from %s\n", policy.OneLine(r.Server.Source))
			continue
		}
		if err := catalog.Write(dir, r.Entry); err != nil {
			failed++
			fmt.Fprintf(e.stdout, "FAIL %s: %s\n", policy.OneLine(r.Server.Name), policy.OneLine(err.Error()))
			continue
		}
		fmt.Fprintf(e.stdout, "ok   %s: %d tools (%s)\n", policy.OneLine(r.Server.Name), len(r.Entry.Tools), policy.OneLine(strings.Join(r.Entry.Names(), ", ")))
		fmt.Fprintf(e.stdout, "     from %s\n", policy.OneLine(r.Server.Source))
	}
	fmt.Fprintf(e.stdout, "catalog: %s\n", dir)
	if failed > 0 {
		fmt.Fprintf(e.stderr, "toolwarden tools sync: %d of %d servers not listed; hooks decide their tools with the spec's pessimistic defaults\n", failed, len(servers))
		return exitError
	}
	return exitOK
}

// syncPlaces says where the agents' files are: the project folder and
// the user's home.
func syncPlaces(e *env, project string) (hook.Places, error) {
	if project == "" {
		wd, err := os.Getwd()
		if err != nil {
			return hook.Places{}, err
		}
		project = wd
	}
	project, err := filepath.Abs(project)
	if err != nil {
		return hook.Places{}, err
	}
	home := e.getenv("HOME")
	if home == "" {
		if home, err = os.UserHomeDir(); err != nil {
			return hook.Places{}, fmt.Errorf("no home folder (%w): set HOME", err)
		}
	}
	return hook.Places{Home: home, Project: project, Getenv: e.getenv, Environ: os.Environ()}, nil
}

// syncServers gathers the servers to list, in order: the agents' configs
// (least specific first), then toolwarden's own. failed counts configs
// that could not be read (reported); -1 is a usage error.
func syncServers(e *env, places hook.Places, agents string, configs []string) ([]hook.Server, int) {
	var servers []hook.Server
	failed := 0
	for _, name := range strings.Split(agents, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		agent, err := hook.ParseAgent(name)
		if err != nil {
			fmt.Fprintln(e.stderr, "toolwarden tools sync:", err)
			return nil, -1
		}
		s, errs := cli.SyncAgentServers(e.stdout, places, agent)
		for _, err := range errs {
			failed++
			fmt.Fprintf(e.stderr, "toolwarden tools sync: %s config: %v\n", agent, err)
		}
		servers = append(servers, s...)
	}
	for _, c := range configs {
		s, err := places.TOMLServers(c)
		if err != nil {
			failed++
			fmt.Fprintf(e.stderr, "toolwarden tools sync: %v\n", err)
			continue
		}
		servers = append(servers, s...)
	}
	warnTwice(e, servers)
	return servers, failed
}

// warnTwice says when one server name is configured differently in two
// places: the catalog keeps both lists (entries are keyed by the server's
// identity too), and a hook believes only the one of the server its agent
// runs under that name.
func warnTwice(e *env, servers []hook.Server) {
	seen := map[string]hook.Server{}
	for _, s := range servers {
		if prev, ok := seen[s.Name]; ok && prev.Spec.Describe() != s.Spec.Describe() {
			fmt.Fprintf(e.stderr, "toolwarden tools sync: server %q is configured as %q in %s and as %q in %s; both are listed, and a hook uses the list of the one its agent runs\n",
				s.Name, prev.Spec.Describe(), policy.OneLine(prev.Source), s.Spec.Describe(), policy.OneLine(s.Source))
		}
		seen[s.Name] = s
	}
}

// listAll lists the servers a few at a time; results keep the servers'
// order.
func listAll(ctx context.Context, servers []hook.Server, timeout time.Duration) []hook.Listed {
	out := make([]hook.Listed, len(servers))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = hook.ListServer(ctx, s, timeout, cli.Version())
		})
	}
	wg.Wait()
	return out
}

func runToolsList(e *env, args []string) int {
	fs := newCmdFlags(e, "tools list", toolsListSynopsis, toolsAbout)
	fs.Summary = "show the tool catalog: each server's tools, their hints, and how old the list is"
	catalogDir := cli.CatalogFlag(fs.FlagSet, e.getenv)
	servers, code, ok := fs.ParseInterleaved(args)
	if !ok {
		return code
	}
	dir, err := catalogDir()
	if err != nil || dir == "" {
		fmt.Fprintf(e.stderr, "toolwarden tools list: no catalog folder (%v); pass --catalog\n", err)
		return exitError
	}
	entries, errs := catalog.ReadAll(dir)
	for _, err := range errs {
		fmt.Fprintln(e.stderr, "toolwarden tools list: warning:", err)
	}
	if len(entries) == 0 {
		fmt.Fprintf(e.stdout, "the tool catalog (%s) is empty: run `toolwarden tools sync`, or use servers through `toolwarden wrap`\n", dir)
		return exitOK
	}
	now := time.Now()
	for _, en := range entries {
		if len(servers) > 0 && !slices.Contains(servers, en.Server) {
			continue
		}
		age := en.Age(now).Round(time.Second)
		stale := ""
		if en.Age(now) > catalog.StaleAfter {
			stale = " (old: run `toolwarden tools sync`)"
		}
		fmt.Fprintf(e.stdout, "%s: %d tools, listed %s ago%s by %s\n", policy.OneLine(en.Server), len(en.Tools), age, stale, policy.OneLine(en.Source))
		fmt.Fprintf(e.stdout, "  server: %s\n", policy.OneLine(en.Identity.String()))
		for _, raw := range en.Tools {
			t, err := host.ParseTool(raw)
			if err != nil {
				fmt.Fprintf(e.stdout, "  (unreadable definition: %v)\n", err)
				continue
			}
			hints := t.Declared.String()
			if hints == "" {
				hints = "no hints (pessimistic defaults)"
			}
			fmt.Fprintf(e.stdout, "  %-28s %s\n", policy.OneLine(t.Name), hints)
		}
	}
	fmt.Fprintf(e.stdout, "catalog: %s\n", dir)
	return exitOK
}

// listedCatalogDir is where wrap and proxy write what they list: the
// default catalog folder, or none when there is no user cache dir (hooks
// then miss annotations; calls through wrap do not).
func listedCatalogDir(e *env) string {
	dir, err := catalog.DefaultDir(e.getenv)
	if err != nil {
		return ""
	}
	return dir
}
