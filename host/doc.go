// Package host is toolwarden's engine: it decides, for every MCP tool call,
// whether to allow it, ask the human, or deny it.
//
// Build a Host from a loaded config, parse each tool once when the server
// lists it, and Check every call. Observe after a call ran, and Approve when
// a human answered an ask:
//
//	cfg, err := host.LoadConfig("config.toml")
//	h, err := host.New(ctx, cfg, host.Defaults().WithAuditLog(logFile))
//	tool, err := host.ParseTool(rawToolFromToolsList)
//	d := h.Check(ctx, host.Call{Session: "conv-1", Server: "fs", Tool: tool, Arguments: args})
//	switch d.Decision {
//	case host.Allow: // run it, then h.Observe(ctx, call, &d, result)
//	case host.Ask:   // show d.Prompt; on "allow for this session": h.Approve("conv-1", &d, host.ForSession)
//	case host.Deny:  // refuse with d.Reasons
//	}
//
// The pipeline itself lives in internal/policy and is pure; host adds sessions
// (pins, approvals, labels), plugins and the audit log around it.
package host
