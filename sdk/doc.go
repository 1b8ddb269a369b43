// Package sdk puts toolwarden's policy in a Go agent built on mcp-go, by
// changing one value and implementing one interface.
//
// The agent's client of each MCP server becomes a guarded client, which is
// itself a client.MCPClient:
//
//	h, err := host.New(ctx, cfg, host.Defaults())      // the policy (config, plugins)
//	g := sdk.New(h, sdk.WithApprover(myApprover))       // asks go to the agent's UI
//	var fs client.MCPClient = client.NewStdioMCPClient(...)
//	fs = g.Client("fs", fs)                             // the one change
//
// From then on:
//
//   - ListTools returns only the tools the session may see, each exactly as
//     the server defined it;
//   - CallTool is decided before it is made: an allowed call runs; a denied
//     one returns a tool error (IsError) saying why, which the model reads;
//     an ask goes to the Approver, and runs only on an allow it offered
//     (once, for the session, or always);
//   - the host observes every call that ran (plugins label the session);
//   - a changed tool definition (the server said its list changed, or a
//     list showed it) is drift: its approvals are dropped and it is asked
//     about again;
//   - resources, prompts, completion, logging, ping and notifications pass
//     through untouched.
//
// # Conversations
//
// An agent that runs several conversations at once gives each a Session,
// and each session its clients:
//
//	conv := g.Session(conversationID)
//	fs := conv.Client("fs", sharedFSClient)
//	// ... when the conversation is over:
//	conv.End()
//
// A client is bound to its session when it is made, so no call can be
// decided in another conversation's name: approvals, pins and labels never
// mix. Guard.Client is the same for the guard's one default conversation.
//
// # Approvers
//
// An Approver gets a Question (server, tool, reasons, hints, the arguments,
// the whole question rendered as toolwarden's proxy shows it, and the
// answers allowed) and returns the Answer the human chose. Terminal asks on
// the controlling terminal; DenyAll and Fixed are for runs without a human.
// An error, a cancelled context, or an answer that was not offered denies.
//
// # Servers
//
// A server author enforces the same policy on their own tools with
// Guard.ServerOption, which asks the server's client through elicitation.
//
// # Reload
//
// Guard.Reload applies a changed config (or changed plugins) at run time;
// sessions keep their approvals, pins and labels, and a config that does
// not load changes nothing. Guard.Swap puts another host in place (one
// built with other settings), copying the sessions into it.
//
// # What the guard sees
//
// The guard decides on the tool definitions as mcp-go decoded them: hints
// in a tool's _meta are read, but annotation keys beyond the four standard
// hints and the title (the proposed extended hints) and schema keys
// mcp-go's schema type does not keep are not seen. Set such hints in the
// config ([apps.<id>.tools."<t>"] hints = {...}), which is trusted anyway.
// For the same reason a definition's hash may differ from the one the
// proxy computes from the wire, so an "always" approval given through the
// proxy may be asked again here.
package sdk
