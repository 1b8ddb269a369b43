package proxy

import (
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// Upstream describes one server the proxy fronts: a command to start
// (stdio) or a URL (streamable HTTP), with its environment, working
// directory, timeouts and the client capabilities it is told of.
type Upstream = upstream.Spec

// UpstreamFromConfig builds the Upstream for one [mcp_servers.<name>]
// table. getenv resolves the environment variables the table names
// (os.Getenv, or a stub in tests).
func UpstreamFromConfig(s *config.Server, getenv func(string) string) (Upstream, error) {
	return upstream.FromConfig(s, getenv)
}
