// Package serverspec says how to reach one upstream MCP server (Spec: a
// command to run, or a URL), how an [mcp_servers.<name>] table becomes
// one (FromConfig, with Codex's environment rules), and what toolwarden
// knows of that server's paths (PathContext).
//
// It imports no MCP library on purpose: `toolwarden hook`, `check` and
// `validate` describe servers without talking to them, and a process that
// links an MCP client or server pays its packages' init on every start
// (docs/RATIONALE.md, "Process start"). The upstream client aliases Spec.
//
//	sp, err := serverspec.FromConfig(cfg.Servers["fs"], os.Getenv)
//	ctx := sp.PathContext(cwd) // Cwd, Home, ArgDirs for path rules
package serverspec
