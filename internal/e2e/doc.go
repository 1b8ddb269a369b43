// Package e2e holds toolwarden's end-to-end tests of wrap and proxy: the
// real binary, built in TestMain, in front of real MCP servers (the npm
// servers installed by scripts/setup.sh and internal/testserver), driven
// by real clients (mcp-go's, the official TypeScript SDK's, and a raw
// JSON-RPC line client for what well-behaved clients never send).
package e2e
