package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/sdk/hook"
)

// admitHookServer holds the event's server to an admin's server
// allow-lists before any decision is made. In hook mode the agent starts
// its servers itself, so the server's command (or URL) is read from the
// agent's own config, where the agent finds it; a server that runs
// through `toolwarden wrap` is judged by the command it wraps. A server
// the lists do not admit, or that cannot be found there, is disabled in
// cfg (required by the entry that decided), so the decision denies, and is
// audited, like any call to a disabled server; the returned note says why,
// for the agent. Servers behind `toolwarden proxy` are held to the lists
// by the proxy, which disables every configured server they do not admit.
func admitHookServer(e *env, cfg *config.Config, agent hook.Agent, ev *hook.Event) string {
	if !cfg.HasServerAllowLists() || !ev.MCP {
		return ""
	}
	if err := hookServerAllowed(e, cfg, agent, ev); err != nil {
		return err.Error()
	}
	return ""
}

func hookServerAllowed(e *env, cfg *config.Config, agent hook.Agent, ev *hook.Event) error {
	home := e.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	project := ev.Cwd
	if project == "" {
		project, _ = os.Getwd()
	}
	servers, errs := hook.Places{Home: home, Project: project, Getenv: e.getenv}.AgentServers(agent)
	// The last definition of a name is the one the agent runs.
	var found *hook.Server
	for j := len(servers) - 1; j >= 0; j-- {
		if servers[j].Name == ev.Server {
			found = &servers[j]
			break
		}
	}
	if found == nil {
		why := "it is not in " + string(agent) + "'s MCP config"
		if len(errs) > 0 {
			why = fmt.Sprintf("%s's MCP config could not be read (%v)", agent, errs[0])
		}
		err := fmt.Errorf("server %q cannot be checked against the server allow-list: %s (required by %s)", ev.Server, why, strings.Join(cfg.ServerAllowListFiles(), ", "))
		// No list admits a server without a command or URL: this disables it.
		_ = cfg.AdmitServer(ev.Server, &config.Server{})
		return err
	}
	sp := found.Spec
	command, args := sp.Command, sp.Args
	if base := strings.TrimSuffix(filepath.Base(command), ".exe"); base == "toolwarden" && len(args) > 0 {
		switch args[0] {
		case "proxy":
			return nil
		case "wrap":
			if k := slices.Index(args, "--"); k >= 0 && k+1 < len(args) {
				command, args = args[k+1], args[k+2:]
			}
		}
	}
	return cfg.AdmitServer(ev.Server, &config.Server{Command: command, Args: args, URL: sp.URL})
}
