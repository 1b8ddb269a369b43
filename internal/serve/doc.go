// Package serve is toolwarden serve: one streamable HTTP MCP endpoint (on
// mcp-go) in front of every configured upstream server, for every caller
// of a team at once.
//
//   - Upstreams: each enabled [mcp_servers.*] is one internal/upstream
//     client (a stdio server run, a streamable HTTP server called), started
//     once and shared by every caller. Its tools are named
//     <server>__<tool>, as toolwarden proxy names them.
//   - tools/list is filtered per caller and session by host.Filter;
//     tools/call is decided by host.Check (a hidden tool called anyway is
//     denied), asks go to the human, Observe runs after every call, and
//     the host writes every audit record, as in toolwarden proxy.
//   - Both protocol eras on one endpoint, chosen per request by mcp-go:
//     2025-06-18 and 2025-11-25 clients get Mcp-Session-Id sessions whose
//     ids are sealed to the principal (see sessionid.go); 2026-07-28
//     clients have no session, and a conversation is named by
//     _meta["io.toolwarden/conversation"] (see caller.go).
//   - Asks: elicitation/create on the call's own stream (2025 era), or a
//     multi round-trip input request with a sealed, single-use request
//     state bound to the principal's conversation, the tool's definition
//     and the exact arguments (2026-07-28); a client that can do neither
//     gets a deny that says how to approve.
//
// A Server is an http.Handler factory:
//
//	s := serve.New(h, specs, serve.Options{})
//	go s.Start(ctx)
//	http.ListenAndServe(addr, s.Handler())
//
// docs/serve.md describes deployment, identities and both eras.
package serve
