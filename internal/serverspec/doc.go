// Package serverspec says how to reach one upstream MCP server (Spec: a
// command to run, or a URL), how an [mcp_servers.<name>] table becomes
// one (FromConfig, with Codex's environment rules), which server it is
// (Identity, what the tool catalog is keyed by), and what its calls are
// resolved against (ServerContext, a policy.ServerContext).
//
// Spec is the one description of an upstream: the upstream client, the
// proxy (wrap and proxy), tools sync and the hooks all take it, under this
// name only. A config.Server is not one: it is the [mcp_servers.<name>]
// table as written, policy keys included, and FromConfig is the one way
// from it to a Spec. This package talks to no server, so the hooks and the
// tool catalog can describe servers without an MCP client.
//
//	sp, err := serverspec.FromConfig(cfg.Servers["fs"], os.Getenv)
//	sc := sp.ServerContext(cwd) // Cwd, Home, ArgDirs for path rules
package serverspec
