package hook

import (
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// ServerContext is what a hook knows of the paths of the process that will
// run the tool, for path rules: the agent's own tools run in the agent, in
// the event's cwd with the hook's HOME (the agent's); an MCP server listed
// in cfg's [mcp_servers] is taken as configured there (its cwd joined to
// the event's, its env's HOME, its command-line directories), any other as
// started by the agent in the event's cwd. Where the agent's directory
// moved since it started a server, that guess is wrong; an event without
// cwd leaves the directory unknown and path rules fail closed. getenv
// reads the hook's environment (os.Getenv).
func (ev *Event) ServerContext(cfg *config.Config, getenv func(string) string) *policy.ServerContext {
	spec := serverspec.Spec{Name: ev.Server, Command: ev.Server}
	if s, ok := cfg.Servers[ev.Server]; ok && ev.MCP {
		if sp, err := serverspec.FromConfig(s, getenv); err == nil {
			spec = sp
		}
	}
	return spec.ServerContext(ev.Cwd)
}
