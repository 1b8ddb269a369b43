// Package gemini runs the real Gemini CLI (pinned in scripts/npm) against
// a scripted model of our own and the real filesystem MCP server, through
// `toolwarden wrap` and through toolwarden's BeforeTool/AfterTool hook,
// and checks what the model is offered and told. It holds tests only.
//
//	go test ./internal/agents/gemini
package gemini
