package main

import (
	"fmt"
	"strings"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hook"
)

// admitHookServer holds the event's server to an admin's server
// allow-lists before any decision is made. In hook mode the agent starts
// its servers itself, so the server's command (or URL) is read from the
// agent's own config, where the agent finds it, with the environment and
// directory the config gives it (admitAgentServer, hook_allowlist.go). A
// server that runs through this very toolwarden's wrap is judged by the
// command wrap's own parser finds; one that runs its proxy is admitted
// only when that proxy loads the same requirements files, so that it
// disables every server they do not admit. A server the lists do not
// admit, or that cannot be found there, is disabled in cfg (required by
// the entry that decided), so the decision denies, and is audited, like
// any call to a disabled server; the returned note says why, for the agent.
func admitHookServer(e *env, cfg *config.Config, agent hook.Agent, ev *hook.Event, runs hook.Resolution) string {
	if !cfg.HasServerAllowLists() || !ev.MCP {
		return ""
	}
	if err := hookServerAllowed(e, cfg, agent, ev, runs); err != nil {
		return err.Error()
	}
	return ""
}

// hookServerAllowed judges runs, the one server the agent runs under the
// event's name; one it does not run (or that cannot be told) is none.
func hookServerAllowed(e *env, cfg *config.Config, agent hook.Agent, ev *hook.Event, runs hook.Resolution) error {
	if runs.Outcome != hook.Runs {
		err := fmt.Errorf("server %q cannot be checked against the server allow-list: %s (required by %s)", ev.Server, runs.Why, strings.Join(cfg.ServerAllowListFiles(), ", "))
		// No list admits a server without a command or URL: this disables it.
		_ = cfg.AdmitServer(ev.Server, &config.Server{})
		return err
	}
	return admitAgentServer(e, cfg, agent, ev, ev.Server, &runs.Server) // hook_allowlist.go
}
