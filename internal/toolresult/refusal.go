package toolresult

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// Denied is the tool error a denied call to tool is answered with (a
// hidden tool's included), by the proxy and by the sdk's guard alike, so
// that an agent reads one refusal whichever way toolwarden sits in front
// of its servers.
func Denied(tool string, d *host.Decision) *mcp.CallToolResult {
	if d.Hidden {
		// Codex's words for a config hide; a plugin's list event is not
		// app configuration, and the reason names the plugin.
		if len(d.Reasons) > 0 && d.Reasons[0].Code == policy.CodeBlockedByAppConfig {
			return Error("toolwarden: MCP tool call blocked by app configuration: %s is not available (%s).", tool, Reasons(d))
		}
		return Error("toolwarden: %s is hidden from this session, so the call was not made (%s).", tool, Reasons(d))
	}
	// The model, and the person reading its transcript, learn which rule
	// denied the call and what would allow it, as the hooks say it.
	if advice := policy.DenyAdvice(d); advice != "" {
		return Error("toolwarden denied this call to %s: %s; %s", tool, Reasons(d), advice)
	}
	return Error("toolwarden denied this call to %s: %s", tool, Reasons(d))
}

// Ended reports whether the client ended an approval prompt without
// choosing an option (decline or cancel), which denies the call.
func Ended(res *mcp.ElicitationResult) bool {
	return res != nil && (res.Action == mcp.ElicitationResponseActionDecline || res.Action == mcp.ElicitationResponseActionCancel)
}

// Unanswered is the tool error for a call to tool whose approval prompt
// the client ended with action (decline or cancel). Agents do that on
// their own (Claude Code -p cancels every elicitation, codex exec declines
// it), so the model must not read that a person refused: it is told what
// the client did and how the call can be allowed. always is where an
// "always" approval would count (AlwaysFor), named in the advice; inbox
// says whether approval_channel = "inbox" would ask elsewhere (not so for
// the sdk's server, which asks an elicitation-capable client itself).
func Unanswered(tool string, d *host.Decision, action mcp.ElicitationResponseAction, always Always, inbox bool) *mcp.CallToolResult {
	var b strings.Builder
	b.WriteString(unansweredWhat(tool, action))
	HowToAllow(&b, d, always, "run the agent interactively and choose an allow option in the prompt", inbox)
	return mcp.NewToolResultError(b.String())
}

// unansweredWhat says what happened to a prompt the client ended with
// action (decline or cancel), never that a person refused: the spec means
// decline for an explicit refusal, but a non-interactive client declines
// or cancels with no one there.
func unansweredWhat(tool string, action mcp.ElicitationResponseAction) string {
	if action == mcp.ElicitationResponseActionDecline {
		return fmt.Sprintf("toolwarden: this call to %s needs the user's approval, and the client declined the approval prompt (MCP elicitation action \"decline\") without choosing an option. "+
			"A non-interactive run (codex exec, for one) declines every prompt itself: then no one saw it. toolwarden denied the call: it was not made.\n", tool)
	}
	return fmt.Sprintf("toolwarden: this call to %s needs the user's approval, and the client cancelled the approval prompt (MCP elicitation action \"cancel\") without an answer. "+
		"A non-interactive run (claude -p, for one) cancels every prompt: then no one saw it. toolwarden denied the call: it was not made.\n", tool)
}

// NoOneAsked is the tool error for a call to tool that needed the user's
// approval when nothing put the question to a person: instead says what
// answered in their place ("this agent answers every approval question
// with sdk.DenyAll"). The model must not read that a person refused; it
// reads the proxy's and the hooks' words for why the call was asked and
// how it can be allowed, first among them first.
func NoOneAsked(tool string, d *host.Decision, instead, first string, always Always) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "toolwarden: this call to %s needs the user's approval, but no one was asked: %s. toolwarden denied the call: it was not made.\n", tool, instead)
	HowToAllow(&b, d, always, first, true)
	return mcp.NewToolResultError(b.String())
}

// HowToAllow writes why the call was asked about and the ways the user can
// allow it, first among them first; always is where an "always" approval
// would count (AlwaysFor), inbox whether the approval inbox is a way.
func HowToAllow(b *strings.Builder, d *host.Decision, always Always, first string, inbox bool) {
	fmt.Fprintf(b, "Why: %s\n", Reasons(d))
	if hs := d.Hints.String(); hs != "" {
		fmt.Fprintf(b, "Hints: %s\n", hs)
	}
	b.WriteString("To allow it, the user can:\n")
	fmt.Fprintf(b, "  - %s;\n", first)
	fmt.Fprintf(b, "  - or %s", policy.ApproveAdvice(d))
	if d.Rememberable && always.kept() {
		b.WriteString(";\n  - or approve this exact definition permanently: ")
		note := always.addCommand(b)
		fmt.Fprintf(b, " --server %s --tool %s --hash %s", d.Server, d.Tool, d.DefinitionHash)
		if d.App != d.Server {
			fmt.Fprintf(b, " --app %s", d.App)
		}
		if d.Connector != "" {
			fmt.Fprintf(b, " --connector %s", d.Connector)
		}
		b.WriteString(note)
	}
	if inbox {
		b.WriteString(";\n  - or set approval_channel = \"inbox\" for this server and answer in the approval inbox (toolwarden inbox)")
	}
	b.WriteString(".")
}

// UpstreamFailed is the tool error for a call to tool on server u that
// failed, as wrap, proxy and serve word it. raise says how to raise the
// result limit in the front end that set it (a flag or a config key).
func UpstreamFailed(tool string, u *upstream.Client, err error, raise string) *mcp.CallToolResult {
	var rpc *upstream.RPCError
	var un *upstream.UnavailableError
	var tl *upstream.TooLargeError
	switch {
	case errors.As(err, &tl):
		return Error("toolwarden: %s ran, but server %s answered with %d bytes, over toolwarden's limit of %d bytes for one result; the result was discarded unread. "+
			"Ask the tool for less (a smaller range or page), or raise the limit: %s.", tool, u.Name(), tl.Size, tl.Limit, raise)
	case errors.As(err, &rpc):
		return Error("%s: %s (error %d from server %s)", tool, rpc.Message, rpc.Code, u.Name())
	case errors.Is(err, upstream.ErrTimeout):
		return Error("toolwarden: %s did not answer within %s (tool_timeout_sec); the call was cancelled.", tool, u.ToolTimeout())
	case errors.As(err, &un):
		return Error("toolwarden: %v", un)
	case upstream.IsTransport(err):
		return Error("toolwarden: the call to %s failed because server %s stopped or the connection broke (%v); it will be restarted on the next call. The call may or may not have run.", tool, u.Name(), errors.Unwrap(err))
	}
	return Error("toolwarden: the call to %s failed: %v", tool, err)
}
