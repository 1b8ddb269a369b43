package upstream

import (
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// Spec says how to reach one upstream MCP server. It lives in serverspec,
// which imports no MCP library, so that what only describes a server (the
// hook's path context, the agents' MCP configs) links no client.
type Spec = serverspec.Spec

// FromConfig turns an [mcp_servers.<name>] table into a Spec (see
// serverspec.FromConfig).
func FromConfig(s *config.Server, getenv func(string) string) (Spec, error) {
	return serverspec.FromConfig(s, getenv)
}

// WithRealPaths returns paths with each one's real path after it (see
// serverspec.WithRealPaths).
func WithRealPaths(paths []string) []string { return serverspec.WithRealPaths(paths) }
