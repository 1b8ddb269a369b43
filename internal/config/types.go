package config

import (
	"fmt"
	"time"

	"github.com/toolwarden/toolwarden/internal/hints"
)

// Mode is an approval mode: auto, prompt, writes or approve. The empty Mode
// means "not set here"; resolution falls through to the next level.
type Mode string

const (
	ModeUnset   Mode = ""
	ModeAuto    Mode = "auto"
	ModePrompt  Mode = "prompt"
	ModeWrites  Mode = "writes"
	ModeApprove Mode = "approve"
)

// Position is where a value was written: file, 1-based line and column.
type Position struct {
	File string
	Line int
	Col  int
}

func (p Position) String() string {
	if p.File == "" {
		return "<embedded default>"
	}
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Config is the merged result of every layer: what policy reads.
// Fields are plain values; after Load returns, a Config is never mutated.
type Config struct {
	// Files are the layers, in load order (later overrides earlier).
	Files []string

	ApprovalPolicy ApprovalPolicy
	// Channel is the top-level approval_channel (ours; see channel.go and
	// ApprovalChannel); Webhook the [webhook] table, nil when absent.
	Channel ChannelSetting
	Webhook *Webhook
	// Audit is the [audit] table (audit.go), nil when absent.
	Audit *Audit
	// Serve is the [serve] table (serve.go), defaults filled in when absent.
	Serve Serve

	// SandboxMode is Codex's sandbox_mode (or the active profile's). Only
	// "danger-full-access" changes a decision: with approval_policy =
	// "never", Codex runs MCP calls without asking.
	SandboxMode SandboxMode

	// Default is [apps._default]; HasDefault says whether the table exists.
	Default    AppDefault
	HasDefault bool
	// Apps are the [apps.<id>] tables, keyed by id.
	Apps map[string]*App
	// Servers are the [mcp_servers.<name>] tables, keyed by name.
	Servers map[string]*Server
	// Policies are the [policies.<name>] tables in the order they were first
	// defined across layers.
	Policies []*Policy

	// Warnings are non-fatal findings (see Validate), e.g. Codex's trap where
	// an [apps.X] table silently enables X while _default.enabled = false.
	Warnings []Diagnostic

	// Profile is the top-level profile key. As in Codex, the named
	// [profiles.<name>] table's approval_policy, when set, replaces the
	// top-level one; every other profile key belongs to Codex and is ignored.
	Profile string

	// Overrides are the user settings requirements replaced (see
	// ApplyRequirements), in the order they were applied.
	Overrides []Override

	// required maps the key paths a requirement decided to where.
	required map[string]Position
	// serverLists are the requirements files with server allow-lists
	// (ServerAllowed).
	serverLists []*Requirements
	// requirementsFiles are the requirements files applied, in order.
	requirementsFiles []string
	// channelPins are requirements' approval_channel pins by app id ("":
	// every app); see channel.go.
	channelPins map[string]ChannelSetting

	// keys maps every key path written in any layer to where the layer that
	// won (the last to write it) wrote it. Validate uses it to point at the
	// exact key; a hand-built Config has none and falls back to entity Pos.
	keys map[string]Position
}

// ApprovalPolicy is Codex's approval_policy: a string, or the granular form.
type ApprovalPolicy struct {
	// Value is "untrusted", "on-failure", "on-request", "never" or
	// "granular". Empty means unset (Codex's default, on-request).
	Value    string
	Granular *Granular
	Pos      Position
}

// SandboxMode is Codex's sandbox_mode: "read-only", "workspace-write" or
// "danger-full-access"; empty when unset (Codex's default is read-only).
type SandboxMode struct {
	Value string
	Pos   Position
}

// FullAccess reports whether Codex would run without a sandbox.
func (m SandboxMode) FullAccess() bool { return m.Value == "danger-full-access" }

// Granular is approval_policy = { granular = { ... } }.
type Granular struct {
	SandboxApproval    bool
	Rules              bool
	SkillApproval      bool
	RequestPermissions bool
	MCPElicitations    bool
}

// AppDefault is [apps._default].
type AppDefault struct {
	Enabled                  *bool // nil: true
	DestructiveEnabled       *bool // nil: true
	OpenWorldEnabled         *bool // nil: true
	DefaultToolsApprovalMode Mode
	ApprovalsReviewer        string
	// Ours.
	Trust           string // "", "full", "pinned", "none"
	ApprovalChannel ChannelSetting
	Pos             Position
}

// App is [apps.<id>]. In toolwarden every server is an app named after the
// server; a connectors = true server may also name per-tool apps.
type App struct {
	ID                       string
	Enabled                  *bool // nil: true, because the table exists (Codex)
	DestructiveEnabled       *bool
	OpenWorldEnabled         *bool
	DefaultToolsEnabled      *bool
	DefaultToolsApprovalMode Mode
	ApprovalsReviewer        string
	DisableToolSuggest       *bool
	Tools                    map[string]*AppTool
	Links                    map[string]*AppLink
	// RequiredModes are a requirements file's managed approval modes by
	// raw tool name (as Codex matches them): the mode the user's layers
	// resolve to is restricted by it (RestrictMode).
	RequiredModes map[string]Mode
	// Ours.
	ReadOnly        *bool // hide every tool that is not read-only
	Trust           string
	Hints           hints.Set // trusted overrides for every tool of the app
	ApprovalChannel ChannelSetting
	// Access is who may see and call the app's tools and whose approval
	// counts (principals.go); RequiredAccess are requirements' rules on
	// top of it.
	Access
	RequiredAccess []RequiredAccess
	Pos            Position
}

// AppTool is [apps.<id>.tools."<tool>"].
type AppTool struct {
	Enabled      *bool
	ApprovalMode Mode
	Hints        hints.Set // ours: trusted overrides for this tool
	Access                 // ours: narrows the app's (principals.go)
	Pos          Position
}

// AppLink is [apps.<id>.links.<link_id>] (newest Codex; parsed, kept).
type AppLink struct {
	ApprovalsReviewer        string
	DefaultToolsApprovalMode Mode
}

// Server is [mcp_servers.<name>].
type Server struct {
	Name string
	// stdio transport
	Command string
	Args    []string
	Env     map[string]string
	EnvVars []EnvVar
	Cwd     string
	// streamable HTTP transport
	URL               string
	BearerTokenEnvVar string
	HTTPHeaders       map[string]string
	EnvHTTPHeaders    map[string]string
	HTTPHeadersHelper string
	Auth              string
	Scopes            []string
	OAuthResource     string

	Enabled                  *bool // nil: true
	Required                 bool
	StartupTimeoutSec        *float64 // nil: 30 (startup_timeout_ms accepted too)
	ToolTimeoutSec           *float64 // nil: 300
	EnabledTools             []string // nil: all
	DisabledTools            []string
	DefaultToolsApprovalMode Mode
	Tools                    map[string]*ServerTool

	// Newer Codex keys, parsed and kept so that real configs load.
	OAuth                     *OAuth
	SupportsParallelToolCalls bool
	OmitToolsFrom             []string
	EnvironmentID             string

	// Ours.
	Trust      string
	Connectors bool // may name per-tool apps through _meta.connector_id
	// ClientCapabilities are those of the proxy's client ("roots",
	// "sampling", "elicitation") the server is told of, and may use; nil:
	// all of them. A server not told of one behaves as with a client
	// without it.
	ClientCapabilities []string
	ApprovalChannel    ChannelSetting
	Pos                Position
}

// Transport names the server's transport: "stdio" when command is set,
// "streamable_http" when url is set. Load guarantees exactly one of them.
func (s *Server) Transport() string {
	if s.Command != "" || s.URL == "" {
		return "stdio"
	}
	return "streamable_http"
}

// Codex's defaults for the server timeouts.
const (
	DefaultStartupTimeout = 30 * time.Second
	DefaultToolTimeout    = 300 * time.Second
)

// StartupTimeout is startup_timeout_sec (or the legacy startup_timeout_ms),
// else Codex's default of 30 s.
func (s *Server) StartupTimeout() time.Duration {
	return seconds(s.StartupTimeoutSec, DefaultStartupTimeout)
}

// ToolTimeout is tool_timeout_sec, else Codex's default of 300 s.
func (s *Server) ToolTimeout() time.Duration {
	return seconds(s.ToolTimeoutSec, DefaultToolTimeout)
}

func seconds(p *float64, def time.Duration) time.Duration {
	if p == nil {
		return def
	}
	return time.Duration(*p * float64(time.Second))
}

// OAuth is [mcp_servers.<name>.oauth] (newest Codex; parsed, kept).
type OAuth struct {
	ClientID     string
	CallbackURL  string
	CallbackPort int
}

// EnvVar is one env_vars entry: a name passed through from toolwarden's
// environment ("NAME" or {name, source}).
type EnvVar struct {
	Name   string
	Source string // "", "local", "remote"
}

// ServerTool is [mcp_servers.<name>.tools.<tool>].
type ServerTool struct {
	ApprovalMode     Mode
	OutputTokenLimit int // 0: unset (newest Codex; parsed, kept)
	Pos              Position
}

// Policy is [policies.<name>]: one plugin and where it applies.
// MaxResultLimitKB bounds result_limit_kb: an observe event's input,
// result text included, is at most 1 MiB.
const MaxResultLimitKB = 960

type Policy struct {
	Name    string
	Wasm    string // path to a .wasm file, resolved against the config file's folder
	Builtin string // name of a first-party plugin embedded in the binary
	Apps    []string
	Tools   []string
	// Config is handed to the plugin as JSON.
	Config        map[string]any
	TimeoutMs     int // 0: default
	MemoryLimitMB int // 0: default
	MaxOutputKB   int // 0: default
	// ResultLimitKB is how much of a tool result the plugin sees in
	// observe (0: the host's result limit, at most 16 KiB).
	ResultLimitKB int
	OnError       string // "deny" (default), "ask", "abstain"
	CanApprove    bool
	Enabled       *bool // nil: true
	Pos           Position
	// Data is the policy's data file (absolute; "" for none) and DataPos
	// where the config names it (policydata.go).
	Data    string
	DataPos Position
}

// Severity of a Diagnostic.
type Severity uint8

const (
	SeverityError Severity = iota
	SeverityWarning
)

// Diagnostic is one finding about a config file: where, what, and what to do.
type Diagnostic struct {
	Pos      Position
	Path     string // dotted key path, e.g. apps.github.destructive_enabled
	Message  string
	Severity Severity
}

// Error formats the diagnostic as "file:line:col: path: message".
func (d Diagnostic) Error() string {
	s := d.Pos.String() + ": "
	if d.Path != "" {
		s += d.Path + ": "
	}
	return s + d.Message
}

// Bool reads an optional bool with its default.
func Bool(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}
