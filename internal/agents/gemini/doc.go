// Package gemini runs the real Gemini CLI (0.61, pinned in scripts/npm)
// against a scripted model of our own and the real filesystem MCP server,
// through `toolwarden wrap` and through toolwarden's BeforeTool/AfterTool
// hook, and checks what the model is offered and told. It holds tests only:
//
//	go test ./internal/agents/gemini
//
// TestMain builds toolwarden once; set TOOLWARDEN_AGENT_BINDIR to a folder
// holding it (go build -o DIR/ ./cmd/toolwarden) to reuse a build. Without the
// agent the tests skip, unless TOOLWARDEN_REQUIRE_TOOLCHAINS=1.
//
// What the tests rely on in Gemini CLI 0.61:
//   - The model is the Gemini API at GOOGLE_GEMINI_BASE_URL with
//     GEMINI_API_KEY and security.auth.selectedType "gemini-api-key":
//     POST /v1beta/models/<model>:streamGenerateContent?alt=sse for the
//     conversation, and with the default model ("auto") one
//     :generateContent first, whose JSON answer routes the turn.
//   - MCP tools are offered as mcp_<server>_<tool> function declarations,
//     and hook events carry that name plus mcp_context.server_name.
//   - A non-interactive run drops from the list the tools Gemini's own
//     policy would ask about by name, matching an MCP tool by its short
//     name too (the filesystem server's write_file); the tests run with
//     --approval-mode yolo so that toolwarden alone decides.
//   - A BeforeTool hook blocks with {"decision":"deny"} or exit status 2;
//     any other failure is a warning and the tool runs.
//   - It declares no MCP elicitation capability, so through wrap an ask
//     comes back as a tool error.
//
// A preloaded network guard (NODE_OPTIONS) refuses and records every
// connection that is not to loopback; each run asserts there was none.
package gemini
