// Package claudecode runs the real Claude Code (pinned in scripts/npm)
// against a scripted Anthropic Messages API of our own and the real
// filesystem MCP server, through `toolwarden wrap`, through toolwarden's
// PreToolUse/PostToolUse hook, and through `toolwarden serve` by URL (an
// "http" MCP server with a bearer token), and checks what the model is
// offered and told. It holds tests only.
//
//	go test ./internal/agents/claudecode
//
// Claude Code runs offline: a fresh HOME, ANTHROPIC_BASE_URL at the
// scripted model, every proxy variable at it too (so any other request is
// recorded, and fails the test), nonessential traffic, telemetry and the
// updater off. What is worth knowing about its wire:
//
//   - It streams /v1/messages (SSE: message_start, content_block_start,
//     content_block_delta with text_delta or input_json_delta,
//     content_block_stop, message_delta with the stop reason,
//     message_stop). With nonessential traffic off it makes no side
//     request (no title, no quota check, no count_tokens); the server
//     answers them anyway.
//   - It joins assistant messages that share a message id into one, so
//     every scripted turn has its own id.
//   - In -p it starts the conversation before MCP servers connect unless
//     MCP_CONNECTION_NONBLOCKING=false.
//   - It gives the filesystem server its working folder as the one MCP
//     root, which replaces the folders on the server's command line.
//   - stream-json shows the server's serverInfo.name as
//     tool_use_meta[].server_display_name.
//   - -p answers every elicitation with "cancel", without showing it; a
//     hook's "ask" comes back to the model as an error carrying the hook's
//     reason, with or without --dangerously-skip-permissions (which, as
//     root, needs IS_SANDBOX=1). The hook's event does not say that it
//     runs under -p (permission_mode is "default"), so a hook cannot tell
//     whether anyone will see the dialog its "ask" opens.
//   - -p runs the hooks of the project's .claude/settings.json, and the
//     servers of its .mcp.json, without asking anyone: a clone's server
//     named like one of the user's runs in its place (shadow_test.go).
package claudecode
