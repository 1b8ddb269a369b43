// Package cli is what the two toolwarden programs share: cmd/toolwarden,
// which users run for everything and which decides hook events, checks
// and validations, and cmd/toolwarden-mcp, which talks MCP (wrap, proxy,
// tools) and which toolwarden replaces itself with for those commands.
// They are two programs so that a hook event, one process per tool call,
// links no MCP client or server library (docs/RATIONALE.md, "Process
// start"); this package keeps their flags, exit codes, config loading and
// version the same.
//
//	fs := cli.NewFlags(stdout, stderr, "wrap", summary, "wrap [flags] -- CMD", about)
//	if code, ok := fs.ParseArgs(args); !ok {
//		return code
//	}
package cli
