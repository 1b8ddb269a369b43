// Package serverspec says how to reach one upstream MCP server (Spec: a
// command to run, or a URL), how an [mcp_servers.<name>] table becomes
// one (FromConfig, with Codex's environment rules), which server it is
// (Identity, what the tool catalog is keyed by), and what its calls are
// resolved against (ServerContext, a policy.ServerContext).
//
// It imports no MCP library on purpose: internal/hook and the tool catalog
// describe servers without talking to them, and a Go program that imports
// the hook adapters should not link an MCP client for that. The upstream
// client aliases Spec.
//
//	sp, err := serverspec.FromConfig(cfg.Servers["fs"], os.Getenv)
//	sc := sp.ServerContext(cwd) // Cwd, Home, ArgDirs for path rules
package serverspec
