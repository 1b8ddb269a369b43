// Package proxy is toolwarden's transparent MCP proxy: an MCP server (on
// mcp-go, over stdio) in front of one or more upstream MCP servers, which
// asks the host about every tool call.
//
//   - tools/list: each upstream's tools, filtered by the host (visibility
//     gate and plugins), each definition byte for byte as the upstream sent
//     it; in proxy mode (WithNamespace) renamed <server>__<tool>.
//   - tools/call: decided by host.Check. Allow forwards the call and relays
//     the upstream's result as it was written; deny is a tool error; ask is
//     an MCP elicitation (multi round-trip input request for 2026-07-28
//     clients, elicitation/create before), whose answer counts only with a
//     request state this process minted for exactly this call (see
//     internal/channel). Observe runs after every call that ran.
//   - prompts, resources and completions pass through, undecided by policy
//     (not tool calls): unchanged in front of one server; in proxy mode
//     prompts are named <server>__<prompt>, lists merged, and a resource
//     URI goes only to the server that listed it. Results are relayed as
//     written; list_changed and resource updates are relayed.
//   - what an upstream asks of its client (sampling, elicitation, roots)
//     goes to the proxy's client under an id of the proxy's own, and the
//     answer back; each upstream is told the client's capabilities (as
//     narrowed by client_capabilities). Log messages are relayed at the
//     client's logging/setLevel, which goes to every upstream.
//   - upstream failures are tool errors: a timeout, a crash (restarted on
//     the next call, with backoff), garbage output; a trustworthily
//     idempotent tool is retried once after a transport failure.
//
// A Proxy serves one client (one session) and runs once:
//
//	h, _ := host.New(ctx, cfg, host.Defaults().WithApprovalsFile(path))
//	p := proxy.New(h, []serverspec.Spec{{Name: "fs", Command: "npx",
//		Args: []string{"-y", "@modelcontextprotocol/server-filesystem", dir}}},
//		proxy.Defaults())
//	err := p.Run(ctx, os.Stdin, os.Stdout)
//
// docs/proxy.md describes the behaviour, the flags of toolwarden wrap and
// toolwarden proxy, and the security of the approval flow.
package proxy
