// Package codex proves toolwarden inside the real Codex CLI (0.171.0, from
// scripts/npm), driven offline by a scripted model. It holds only tests:
//
//	go test ./internal/agents/codex/
//
// Each test gives `codex exec` a fresh HOME and CODEX_HOME whose
// config.toml names one model provider, a Responses API server of the
// test's own on 127.0.0.1 (wire_api = "responses", SSE), turns off what
// would reach other hosts (update checks, analytics, OpenTelemetry,
// feedback, web search, the plugin and app catalogs, model discovery) and
// points every proxy variable at the scripted model, which records any
// other request so a test can fail on it. The filesystem MCP server from
// npm runs behind `toolwarden wrap`, or directly with toolwarden's
// PreToolUse hook installed and trusted as Codex requires.
//
// What Codex 0.171 does on the wire, as these tests rely on it:
//   - MCP tools are offered as a namespace tool {"type":"namespace",
//     "name":"mcp__fs","tools":[{"type":"function","name":"read_text_file"}]}
//     and called back with "namespace" and "name" apart; hooks see
//     mcp__fs__read_text_file.
//   - Every request carries the whole conversation (store = false); a tool
//     result is a function_call_output whose output is a string, or for an
//     MCP error a list of input_text items.
//   - Codex gates MCP tools annotated destructive itself: under
//     approval_policy = "never" it refuses them before any server or hook
//     sees them, unless the server's default_tools_approval_mode is
//     "approve".
//   - `codex exec` declares MCP elicitation and declines every request
//     itself.
//   - Codex starts an MCP server with only HOME, PATH, LANG and TERM of its
//     environment (no XDG_* or TOOLWARDEN_*; [mcp_servers.<name>] env adds
//     more), and puts its vendored codex-path folder first on PATH, for MCP
//     servers and hooks alike.
//   - A hook in config.toml runs only when trusted: [hooks.state."<file>:
//     pre_tool_use:<group>:<handler>"] trusted_hash must equal the hash of
//     its definition (see trust_test.go); `codex app-server` lists hooks
//     with their keys and hashes offline (hooks/list).
package codex
