// Package upstream is toolwarden's side of the connection to a real MCP
// server: an mcp-go client that starts the server (stdio) or opens a session
// (streamable HTTP), keeps its raw tool list, relists on
// notifications/tools/list_changed, bounds every call with the tool
// timeout, and restarts a server that died, with backoff. Over stdio, tool
// calls bypass mcp-go: Begin writes the request line and the connection's
// reader hands the result, undecoded, to a Receiver. Request sends any
// other request (prompts, resources, completions) with the same restarts
// and timeout, Subscribe keeps resource subscriptions across restarts,
// OnNotify hands over the server's prompt and resource notifications and
// its log messages (SetLogLevel sets their level, and keeps it across
// restarts), and OnProgress the progress of calls begun with a token
// (BeginWithProgress). OnServerRequest answers what the server asks of its
// client (sampling, elicitation, roots), which SetClientCapabilities says
// it may ask.
//
//	c := upstream.New(serverspec.Spec{Name: "fs", Command: "npx",
//		Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}}, "dev", nil)
//	if err := c.Start(ctx); err != nil { ... }
//	for _, t := range c.Tools() { fmt.Println(t.Name, t.HashHex) }
//	res, err := c.Call(ctx, "read_file", json.RawMessage(`{"path":"/tmp/x"}`))
//	c.Begin("read_file", args, upstream.ReceiverFunc(func(res json.RawMessage, err error) { ... }))
//	prompts, err := c.Request(ctx, "prompts/list", nil)
//
// A start that fails says why, at once when it can: a *NotFoundError for
// a command that is not on PATH (before any process exists), an
// *ExitedError with the exit status and the end of stderr for a server
// that exits before the handshake, else the startup timeout. An HTTP
// server's own notifications and requests arrive on the standalone GET
// stream the client opens after the handshake (getstream.go).
//
// A client is made from a serverspec.Spec (the one description of an
// upstream; serverspec.FromConfig builds it from an [mcp_servers.<name>]
// table as Codex would: environment, headers, bearer token, timeouts).
package upstream
