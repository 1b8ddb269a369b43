package main

import (
	"errors"
	"os"

	"github.com/toolwarden/toolwarden/internal/hook"
)

// agentServerNames lists the MCP servers agent is configured with for a
// project (Places.AgentServers: the user's and the project's files), for
// hook.ParseWith to resolve a Gemini CLI tool name sent without
// mcp_context. It is called only for such a name. Servers of a project the
// agent does not trust are left out: the agent does not start them.
func agentServerNames(e *env, agent hook.Agent) hook.ServerNames {
	return func(cwd string) ([]string, error) {
		home := e.getenv("HOME")
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		servers, errs := hook.Places{Home: home, Project: cwd, Getenv: e.getenv}.AgentServers(agent)
		names := make([]string, 0, len(servers))
		for _, s := range servers {
			if s.Untrusted == "" { // the agent does not start the others
				names = append(names, s.Name)
			}
		}
		return names, errors.Join(errs...)
	}
}
