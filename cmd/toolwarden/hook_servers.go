package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/host/policy"
	"github.com/toolwarden/toolwarden/sdk/hook"
)

// codeServerNotAllowed is the reason code of a hook call denied because an
// admin's server allow-list does not admit the server.
const codeServerNotAllowed = "server_not_allowed"

// holdToServerAllowLists denies d when the requirements in force limit
// which servers may run and do not admit the call's server. In hook mode
// the agent starts its servers itself, so the server's command (or URL) is
// read from the agent's own config, where the agent finds it; a server
// that runs through `toolwarden wrap` is judged by the command it wraps.
// A server that cannot be found there is denied: the allow-list cannot
// vouch for it. Servers behind `toolwarden proxy` are held to the lists by
// the proxy, which disables every configured server they do not admit.
func holdToServerAllowLists(e *env, cfg *config.Config, agent hook.Agent, ev *hook.Event, d *policy.Decision) {
	if !cfg.HasServerAllowLists() || !ev.MCP || d.Decision == policy.Deny {
		return
	}
	err := hookServerAllowed(e, cfg, agent, ev)
	if err == nil {
		return
	}
	d.Decision = policy.Deny
	d.Rememberable = false
	d.Reasons = []policy.Reason{{Source: "requirements", Code: codeServerNotAllowed, Message: err.Error()}}
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
		return fmt.Errorf("server %q cannot be checked against the server allow-list: %s (required by %s)", ev.Server, why, strings.Join(cfg.ServerAllowListFiles(), ", "))
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
	return cfg.ServerAllowed(ev.Server, &config.Server{Command: command, Args: args, URL: sp.URL})
}
