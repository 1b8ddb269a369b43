package cli

import (
	"io"
	"time"
)

// ServeDefaults are the defaults of wrap's and proxy's limits, which the
// MCP side (internal/proxy) owns; this package links no MCP library, so the
// caller gives them. A caller that only needs to know what the command
// line means (the hook, judging a server the agent runs) may give the zero
// value: defaults never change what parses.
type ServeDefaults struct {
	MaxArgBytes     int
	MaxResultBytes  int
	ApprovalTimeout time.Duration
}

// ServeFlags are the flags wrap and proxy share.
type ServeFlags struct {
	Configs, Requirements StringList
	Approvals, Audit      string
	MaxArgBytes           int
	MaxResultBytes        int
	ApprovalTimeout       time.Duration
	Quiet, NoWatch        bool

	// StoreURL is --store: the shared store wrap and proxy keep "always"
	// approvals and session state in ("" = none named; $TOOLWARDEN_STORE
	// may still name one).
	StoreURL string
}

// WrapFlags are wrap's flags and the server command after them.
type WrapFlags struct {
	ServeFlags
	App                         string
	ToolTimeout, StartupTimeout time.Duration
	// Command is the server's command and its arguments.
	Command []string
}

// WrapSummary and ProxySummary head wrap's and proxy's help, and name
// them in toolwarden's command list.
const (
	WrapSummary  = "run one stdio MCP server behind toolwarden (same tool names)"
	ProxySummary = "serve every [mcp_servers.*] as one MCP server (<server>__<tool>)"
)

var serveSummaries = map[string]string{"wrap": WrapSummary, "proxy": ProxySummary}

// newServeFlags makes the flag set of wrap or proxy with the shared flags
// registered into f.
func newServeFlags(stdout, stderr io.Writer, name, synopsis, about string, d ServeDefaults, f *ServeFlags) *Flags {
	fs := NewFlags(stdout, stderr, name, serveSummaries[name], synopsis, about)
	fs.Var(&f.Configs, "config", "config file (repeatable; later files override earlier)")
	fs.Var(&f.Requirements, "requirements", "requirements file an admin sets (repeatable; with /etc/codex/requirements.toml, /etc/toolwarden/requirements.toml and $TOOLWARDEN_REQUIREMENTS)")
	fs.StringVar(&f.Approvals, "approvals", "", "persistent \"always\" approvals file (default: "+DisplayApprovalsPath()+")")
	fs.StringVar(&f.StoreURL, "store", "", "share \"always\" approvals and session state through this store: sqlite:PATH or postgres://USER@HOST/DB (default: $TOOLWARDEN_STORE, else none: the approvals file; not with --approvals)")
	fs.StringVar(&f.Audit, "audit", "", "the decision log every wrap, proxy and hook of yours appends to and the inbox reads (default: [audit] path of the config, else <home>/.local/state/toolwarden/audit.jsonl; \"off\": none)")
	fs.IntVar(&f.MaxArgBytes, "max-arg-bytes", d.MaxArgBytes, "largest tools/call arguments accepted, in bytes")
	fs.IntVar(&f.MaxResultBytes, "max-result-bytes", d.MaxResultBytes, "largest message accepted from a stdio server (a tool result), in bytes; a larger one is discarded and the call gets a tool error")
	fs.DurationVar(&f.ApprovalTimeout, "approval-timeout", d.ApprovalTimeout, "how long an approval prompt may stay unanswered before the call is denied")
	fs.BoolVar(&f.Quiet, "quiet", false, "log only errors to stderr")
	fs.BoolVar(&f.NoWatch, "no-watch", false, "do not apply changes of the --config files (and the plugins they name) while running; SIGHUP still reloads")
	return fs
}

// ParseWrap reads `toolwarden wrap` arguments: the flags, then the server
// command. wrap runs it, and the hook reads an agent's `toolwarden wrap`
// server with it, so that both agree on the command that will run. When
// wrap must stop (--help, bad usage, no command) ok is false, with the
// exit status, and the reason is on stderr.
func ParseWrap(stdout, stderr io.Writer, d ServeDefaults, args []string) (fs *Flags, f *WrapFlags, code int, ok bool) {
	f = &WrapFlags{}
	fs = newServeFlags(stdout, stderr, "wrap", "wrap [--config F]... [--app NAME] [flags] -- CMD [ARGS...]",
		`Serves MCP on stdin/stdout in front of the stdio MCP server CMD: same tools, same
names, same definitions, but hidden tools are left out, every call is decided by
policy, and asks become approval prompts (MCP elicitation) in the client.`, d, &f.ServeFlags)
	fs.StringVar(&f.App, "app", "", "the server's name for policy ([apps.<name>], [mcp_servers.<name>]); default: derived from the command")
	fs.DurationVar(&f.ToolTimeout, "tool-timeout", 0, "per-call timeout (default: tool_timeout_sec of [mcp_servers.<app>], else 300s)")
	fs.DurationVar(&f.StartupTimeout, "startup-timeout", 0, "timeout to start the server (default: startup_timeout_sec of [mcp_servers.<app>], else 30s)")
	if code, ok := fs.ParseArgs(args); !ok {
		return fs, f, code, false
	}
	f.Command = fs.Args()
	if len(f.Command) == 0 {
		return fs, f, fs.UsageError("no server command given (toolwarden wrap --app NAME -- CMD ARGS...)"), false
	}
	return fs, f, ExitOK, true
}

// ParseProxy reads `toolwarden proxy` arguments, which are flags alone;
// see ParseWrap.
func ParseProxy(stdout, stderr io.Writer, d ServeDefaults, args []string) (fs *Flags, f *ServeFlags, code int, ok bool) {
	f = &ServeFlags{}
	fs = newServeFlags(stdout, stderr, "proxy", "proxy --config F [--config F]... [flags]",
		`Serves MCP on stdin/stdout in front of every enabled [mcp_servers.<name>] of the
config (stdio and streamable HTTP), each tool as <name>__<tool>. Hidden tools are
left out, every call is decided by policy, asks become approval prompts.`, d, f)
	if code, ok := fs.ParseArgs(args); !ok {
		return fs, f, code, false
	}
	if code, ok := fs.NoArgs("servers come from [mcp_servers.*] in --config"); !ok {
		return fs, f, code, false
	}
	return fs, f, ExitOK, true
}
