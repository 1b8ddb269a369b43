package host

import (
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// ServerContext is what is known of a server's paths: its working
// directory, home, the client's roots it was told of and the directories
// on its command line. A Call carries it so that path rules judge the file
// the server will touch, not the argument's text ("secret/x" is
// "/srv/secret/x" to a server in /srv). Empty fields are unknown.
type ServerContext = policy.ServerContext

// Server is one [mcp_servers.<name>] table of a Config (Config.MCPServers):
// how Codex would start the server, and the policy keys that apply to it.
type Server = config.Server

// StdioServerContext is the context of a stdio server that runs command
// with args in dir (relative to wd, the directory it is started from) and
// env (KEY=VALUE, its whole environment): its working directory, its HOME,
// and the folders on its command line with their real paths, as the proxy
// and the hooks derive it for the servers they judge.
func StdioServerContext(command string, args, env []string, dir, wd string) *ServerContext {
	return serverspec.Spec{Command: command, Args: args, Env: env, Dir: dir}.ServerContext(wd)
}
