// Package hook adapts toolwarden to agents' tool hooks: Claude Code's
// PreToolUse/PostToolUse, Gemini CLI's BeforeTool/AfterTool and Codex's
// PreToolUse/PostToolUse. An agent runs `toolwarden hook --agent NAME` once
// per tool call with a JSON event on stdin; this package reads that event
// and renders a decision in the agent's own vocabulary.
//
// Agents that cannot ask (Gemini's BeforeTool, Codex's PreToolUse) get a
// deny that says what needs approval and how to grant it: failing closed is
// the only safe reading of "ask" there.
//
// An event names a tool but carries none of its annotations; the tool
// catalog (one file per server, written by `toolwarden tools sync`, wrap
// and proxy) holds the definitions servers listed, and Event.Definition
// finds the event's tool there. Places reads the agents' own MCP configs,
// and List lists one of their servers, for `tools sync`.
package hook

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolwarden/toolwarden/internal/policy"
)

// Agent names a supported agent.
type Agent string

const (
	Claude Agent = "claude"
	Gemini Agent = "gemini"
	Codex  Agent = "codex"
)

// ParseAgent reads an agent name as given to --agent.
func ParseAgent(s string) (Agent, error) {
	switch strings.ToLower(s) {
	case "claude", "claude-code", "claudecode":
		return Claude, nil
	case "gemini", "gemini-cli":
		return Gemini, nil
	case "codex":
		return Codex, nil
	}
	return "", fmt.Errorf("unknown agent %q (want claude, gemini or codex)", s)
}

// Phase says whether an event comes before or after the tool ran.
type Phase uint8

const (
	Before Phase = iota
	After
)

// Event is one hook invocation.
type Event struct {
	Agent   Agent
	Name    string // hook_event_name as sent
	Phase   Phase
	Session string
	// ToolName is the agent's name for the tool; Server and Tool are what
	// toolwarden decides on. MCP tools map to their server; the agent's
	// built-in tools map to a server named after the agent.
	ToolName string
	Server   string
	Tool     string
	MCP      bool
	Input    json.RawMessage
	// Response is the tool's result (after-events only), as sent.
	Response json.RawMessage
	// Cwd is the agent's working directory ("cwd", sent by Claude Code,
	// Gemini CLI and Codex), "" when not sent. An MCP server started by
	// the agent without a cwd of its own started there, but the agent's
	// directory may have moved since.
	Cwd string
	// PermissionMode is Claude Code's "permission_mode" ("default",
	// "acceptEdits", "plan", "bypassPermissions", ...), "" when not sent.
	PermissionMode string
}

type wireEvent struct {
	SessionID      string          `json:"session_id"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolResponse   json.RawMessage `json:"tool_response"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	MCPContext     *struct {
		ServerName  string `json:"server_name"`
		ServerName2 string `json:"serverName"`
		ToolName    string `json:"tool_name"`
		ToolName2   string `json:"toolName"`
	} `json:"mcp_context"`
}

// Parse reads one hook event. A Gemini CLI MCP tool name sent without
// mcp_context that two servers could own is an error (see ParseWith).
func Parse(agent Agent, data []byte) (*Event, error) {
	return ParseWith(agent, data, nil)
}

// ParseWith is Parse resolving a Gemini CLI MCP tool name that does not say
// which server it belongs to (gemininame.go) against the servers Gemini is
// configured with, listed by servers (nil: none known) only when needed.
// A name that still fits more than one server, or that Gemini cut short,
// is an error: the call is not decided on a guessed server.
func ParseWith(agent Agent, data []byte, servers ServerNames) (*Event, error) {
	var w wireEvent
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, fmt.Errorf("hook event is not JSON: %w", err)
	}
	if w.ToolName == "" {
		return nil, errors.New(`hook event has no "tool_name"`)
	}
	ev := &Event{Agent: agent, Name: w.HookEventName, Session: w.SessionID, ToolName: w.ToolName, Input: w.ToolInput, Response: w.ToolResponse, Cwd: w.Cwd, PermissionMode: w.PermissionMode}
	switch w.HookEventName {
	case "PreToolUse", "BeforeTool", "":
		ev.Phase = Before
	case "PostToolUse", "AfterTool":
		ev.Phase = After
	default:
		return nil, fmt.Errorf("hook event %q is not a tool event (want PreToolUse, PostToolUse, BeforeTool or AfterTool)", w.HookEventName)
	}
	if ev.Session == "" {
		ev.Session = "default"
	}
	if len(ev.Input) == 0 || string(ev.Input) == "null" {
		ev.Input = json.RawMessage(`{}`)
	}
	if c := w.MCPContext; c != nil {
		server, tool := first(c.ServerName, c.ServerName2), first(c.ToolName, c.ToolName2)
		if server != "" && tool != "" {
			ev.Server, ev.Tool, ev.MCP = server, tool, true
			return ev, nil
		}
	}
	if agent == Gemini {
		server, tool, mcp, err := splitGemini(w.ToolName, w.Cwd, servers)
		if err != nil {
			return nil, err
		}
		ev.Server, ev.Tool, ev.MCP = server, tool, mcp
		return ev, nil
	}
	ev.Server, ev.Tool, ev.MCP = SplitToolName(agent, w.ToolName)
	return ev, nil
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// SplitToolName maps a Claude Code or Codex tool name to (server, tool):
// both name MCP tools mcp__<server>__<tool>. Other tools belong to the
// agent itself. Gemini CLI's names are resolved by ParseWith
// (gemininame.go), with the servers it is configured with.
func SplitToolName(agent Agent, name string) (server, tool string, mcp bool) {
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if i := strings.Index(rest, "__"); i > 0 && i+2 < len(rest) {
			return rest[:i], rest[i+2:], true
		}
	}
	return string(agent), name, false
}

// Output is what the hook process prints and exits with.
type Output struct {
	Stdout []byte
	Exit   int
}

// Render turns a decision on a call with these arguments into the agent's
// answer to a before-event. An ask or a deny shows the arguments as an
// approval prompt does (policy.ViewArguments): flagged ones first, long
// values cut one by one, with the digest of the whole. Notes (where the
// tool's definition came from, or why there is none) follow the reasons.
func Render(agent Agent, d *policy.Decision, args json.RawMessage, notes ...string) Output {
	return render(agent, d, args, false, notes)
}

// RenderEvent is Render for the call of ev: a call to one of the agent's
// own tools (not MCP) gets advice that fits it, the agent's app table
// rather than a server to define or wrap.
func RenderEvent(ev *Event, d *policy.Decision, notes ...string) Output {
	return render(ev.Agent, d, ev.Input, !ev.MCP, notes)
}

func render(agent Agent, d *policy.Decision, args json.RawMessage, builtin bool, notes []string) Output {
	reason := Reason(d)
	for _, n := range notes {
		reason += "; " + policy.OneLine(n)
	}
	reason += advice(agent, d, builtin)
	if d.Decision != policy.Allow {
		reason += "\n" + Arguments(d, args)
	}
	switch agent {
	case Claude:
		return jsonOut(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":            "PreToolUse",
			"permissionDecision":       d.Decision.String(),
			"permissionDecisionReason": reason,
		}})
	case Codex:
		// Codex's PreToolUse cannot ask; an allow is left to Codex's own
		// approval flow by printing nothing.
		if d.Decision == policy.Allow {
			return Output{}
		}
		return jsonOut(map[string]any{"hookSpecificOutput": map[string]any{
			"hookEventName":            "PreToolUse",
			"permissionDecision":       "deny",
			"permissionDecisionReason": reason,
		}})
	default: // Gemini
		if d.Decision == policy.Allow {
			return jsonOut(map[string]any{"decision": "allow", "reason": reason})
		}
		return jsonOut(map[string]any{"decision": "deny", "reason": reason})
	}
}

// Reason is the one-line explanation shown to the user (or the model).
// Names and messages are escaped onto that line (policy.OneLine), so that
// nothing a server or plugin wrote can pose as a line of its own.
func Reason(d *policy.Decision) string {
	var b strings.Builder
	b.WriteString("toolwarden: ")
	b.WriteString(d.Decision.String())
	b.WriteString(" ")
	b.WriteString(policy.OneLine(d.Server))
	b.WriteString("/")
	b.WriteString(policy.OneLine(d.Tool))
	for i, r := range d.Reasons {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(policy.OneLine(r.Message))
		b.WriteString(" [")
		b.WriteString(r.Code)
		b.WriteString("]")
	}
	return b.String()
}

// Arguments is the arguments block of a reason: the view an approval
// prompt shows, and, when that view cannot show what the decision is
// about, a line that says so.
func Arguments(d *policy.Decision, args json.RawMessage) string {
	v := policy.ViewArguments(args, d.Flagged)
	text := v.Text()
	if d.Prompt != nil && d.Prompt.Incomplete != "" {
		text += "\nThis call cannot be shown in full (" + d.Prompt.Incomplete + "): approve it for this call only, if at all."
	}
	return text
}

// claudeAskNote follows the reason of an ask handed to Claude Code's
// dialog. `claude -p` shows no dialog and hands the reason to the model
// instead, and the event does not say which will happen (permission_mode
// is "default" either way), so the reason says both.
func claudeAskNote(d *policy.Decision) string {
	return "Claude Code asks the user in its approval dialog; if no one saw it (claude -p shows none), the call was not made; to allow it, " + policy.ApproveAdvice(d)
}

// advice is what follows the reason of an ask or a deny: how the call can
// be allowed, and where.
func advice(agent Agent, d *policy.Decision, builtin bool) string {
	out := ""
	if d.Decision == policy.Ask {
		switch {
		case builtin && agent == Claude:
			out += "; Claude Code asks the user in its approval dialog; if no one saw it (claude -p shows none), the call was not made; to allow it, " + policy.BuiltinApproveAdvice(d, agent.Display())
		case builtin:
			out += "; this call needs approval, which this agent's hook cannot ask for; to allow it, " + policy.BuiltinApproveAdvice(d, agent.Display())
		case agent == Claude:
			out += "; " + claudeAskNote(d)
		default:
			out += "; " + NeedsApproval(d)
		}
	}
	deny := policy.DenyAdvice(d)
	if builtin {
		deny = policy.BuiltinDenyAdvice(d, agent.Display())
	}
	if deny != "" {
		out += "; " + deny
	}
	return out
}

// Display is the agent's name as its users know it.
func (a Agent) Display() string {
	switch a {
	case Claude:
		return "Claude Code"
	case Gemini:
		return "Gemini CLI"
	case Codex:
		return "Codex"
	}
	return string(a)
}

// NeedsApproval explains, for agents that cannot ask, how to let the call
// through next time.
func NeedsApproval(d *policy.Decision) string {
	return "this call needs approval, which this agent's hook cannot ask for; to allow it, " + policy.ApproveAdvice(d) + ", or run the server behind `toolwarden wrap`, which asks through MCP elicitation"
}

func jsonOut(v any) Output {
	b, err := json.Marshal(v)
	if err != nil {
		return Output{Exit: 2}
	}
	return Output{Stdout: append(b, '\n')}
}

// ResponseIsError reports whether an after-event's tool response says the
// call failed: an MCP result's "isError" (Claude Code, Codex), a
// "is_error", or Gemini CLI's "error" when it is set. Anything else,
// including a response that is not a JSON object, counts as success:
// observe records the outcome, it decides nothing.
func (ev *Event) ResponseIsError() bool {
	var r struct {
		IsError  bool            `json:"isError"`
		IsError2 bool            `json:"is_error"`
		Error    json.RawMessage `json:"error"`
	}
	if json.Unmarshal(ev.Response, &r) != nil {
		return false
	}
	switch strings.TrimSpace(string(r.Error)) {
	case "", "null", "false", `""`:
		return r.IsError || r.IsError2
	}
	return true
}
