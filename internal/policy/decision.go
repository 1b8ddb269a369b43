package policy

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/session"
)

// Verdict is an outcome: allow, ask, deny, or (plugins only) abstain.
type Verdict uint8

const (
	Abstain Verdict = iota
	Allow
	Ask
	Deny
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return "abstain"
}

// ParseVerdict reads a verdict name.
func ParseVerdict(s string) (Verdict, bool) {
	switch s {
	case "allow":
		return Allow, true
	case "ask":
		return Ask, true
	case "deny":
		return Deny, true
	case "abstain":
		return Abstain, true
	}
	return Abstain, false
}

func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

func (v *Verdict) UnmarshalText(b []byte) error {
	p, ok := ParseVerdict(string(b))
	if !ok {
		return &json.UnsupportedValueError{Str: string(b)}
	}
	*v = p
	return nil
}

// Reason codes. Plugins add their own.
const (
	CodeBlockedByAppConfig = "blocked_by_app_config"
	CodeModeApprove        = "approval_mode_approve"
	CodeModePrompt         = "approval_mode_prompt"
	CodeModeWritesWrite    = "approval_mode_writes"
	CodeModeWritesReadOnly = "approval_mode_writes_read_only"
	CodeAutoDestructive    = "destructive"
	CodeAutoReadOnly       = "read_only"
	CodeAutoOpenWorld      = "open_world_or_destructive"
	CodeAutoSafe           = "not_destructive_closed_world"
	CodeRemembered         = "remembered"
	CodePolicyNever        = "approval_policy_never"
	CodeElicitationsOff    = "mcp_elicitations_disabled"
	CodePluginError        = "plugin_error"
)

// Reason says why: which step (source) and a stable code with a message.
type Reason struct {
	Source  string `json:"source"`
	Code    string `json:"code"`
	Message string `json:"message"`
	// RequiredBy is the admin requirements file (and line) that set what
	// decided, when one did: only an admin can change it.
	RequiredBy string `json:"required_by,omitempty"`
}

// Step is one line of the trace: a pipeline step and what it saw.
type Step struct {
	Step    string `json:"step"`
	Outcome string `json:"outcome"`
	// Source is where the deciding rule lives (a config path, a plugin name).
	Source string `json:"source,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Elapsed is set for plugin steps.
	Elapsed time.Duration `json:"elapsed_ns,omitempty"`
	// StateUpdate and State are a stateful plugin's update of its session
	// state at this check and the state after it (pdk/ABI.md section 12).
	StateUpdate *session.StateUpdate `json:"state_update,omitempty"`
	State       *session.PluginState `json:"state,omitempty"`
}

// Prompt is what an ask shows a human.
type Prompt struct {
	Title   string    `json:"title"`
	Message string    `json:"message"`
	Hints   hints.Set `json:"hints"`
	Options []string  `json:"options"`
	// Scope describes the scopes OptionAllowSessionScoped remembers
	// ("path under /repo/docs/**"), set when it is offered.
	Scope string `json:"scope,omitempty"`
	// Incomplete says why the prompt cannot show everything it decides on
	// (a flagged value cut, keys hidden, arguments that are not an object);
	// such a prompt offers allow_once and deny only. Empty when it can.
	Incomplete string `json:"incomplete,omitempty"`
}

// Prompt options.
const (
	OptionAllowOnce    = "allow_once"
	OptionAllowSession = "allow_session"
	OptionAlways       = "always"
	OptionDeny         = "deny"
)

// Decision is the pipeline's answer for one call.
type Decision struct {
	Decision     Verdict `json:"decision"`
	Rememberable bool    `json:"rememberable"`
	// Hidden is true when the tool is hidden from the session (by the
	// visibility gate or a plugin's list event): it is absent from
	// tools/list, and a call to it is denied without a prompt.
	Hidden         bool               `json:"hidden,omitempty"`
	Reasons        []Reason           `json:"reasons"`
	Trace          []Step             `json:"trace"`
	Prompt         *Prompt            `json:"prompt,omitempty"`
	Server         string             `json:"server"`
	App            string             `json:"app"`
	Connector      string             `json:"connector,omitempty"`
	Tool           string             `json:"tool"`
	DefinitionHash string             `json:"definition_hash"`
	Mode           config.Mode        `json:"mode,omitempty"`
	Hints          hints.Set          `json:"hints"`
	Capabilities   hints.Capabilities `json:"capabilities"`
	Labels         []string           `json:"labels,omitempty"` // labels plugins asked to add
	// Flagged are the arguments the deciding plugin verdicts are about, as
	// JSON pointers ("/path", "/options/url"), deduplicated, in the order
	// the plugins named them. Prompts show them first and never cut them
	// without giving up remembering.
	Flagged []string `json:"flagged,omitempty"`
	// Scopes are what an OptionAllowSessionScoped answer remembers, set
	// when the prompt offers it (scope_remember.go).
	Scopes []ProposedScope `json:"scopes,omitempty"`
	// Approvers are whose approval counts for this tool's asks, as the
	// config names them (principal names and "group:<name>"), nil when
	// it names none: then the caller's own answer counts. See MayApprove.
	Approvers []string `json:"approvers,omitempty"`

	// approverLevels are every level's approvers when more than one
	// level names some (an approver must be in each); Approvers is then
	// the innermost. A pointer: every Decision carries the field, and few
	// use it.
	approverLevels *[][]string

	// unremembered are the plugin asks that forbade remembering, and
	// baseForbids says the baseline's ask did: what a scoped approval may
	// answer or lift.
	unremembered []scopedAsk
	baseForbids  bool
}

// CheckInput is what a plugin sees for one call (the "check" event).
type CheckInput struct {
	Session   string
	Labels    []string // session labels at the time of the call
	Server    string
	App       string
	Connector string
	Tool      *hints.Tool
	Arguments json.RawMessage
	Hints     hints.Set
	Caps      hints.Capabilities
	// Baseline is the decision of steps 1-4 (before plugins).
	Baseline     Verdict
	Mode         config.Mode
	Rememberable bool
	// Context is what is known of the server's paths; nil when nothing is.
	Context *ServerContext
	// State holds the session's plugin states; nil when there is none.
	State StateStore
	// ArgumentsChecked: the pipeline's CheckArguments accepted Arguments
	// (a JSON object without duplicate keys), so a plugin host need not
	// scan them again to know they are valid JSON.
	ArgumentsChecked bool
}

// PluginVerdict is one plugin's answer.
type PluginVerdict struct {
	Verdict  Verdict
	Code     string
	Reason   string
	Remember bool     // may this ask be remembered
	Labels   []string // session labels to add
	// Arguments name the arguments the verdict is about: top-level names
	// ("path") or JSON pointers ("/options/url").
	Arguments []string
	// Scopes are what an approval of this ask may be remembered for
	// (at most MaxScopes), when Remember is false: each covers one of
	// Arguments (scope_remember.go).
	Scopes []Scope
	// Err is set when the plugin failed (trap, timeout, bad output, memory
	// limit); Verdict is then the plugin's on_error verdict.
	Err error
	// StateUpdate and State are set when a stateful plugin changed its
	// session state: what it asked for and the state after.
	StateUpdate *session.StateUpdate
	State       *session.PluginState
	// Detail, when set, is TraceDetail of this verdict, rendered once by
	// a plugin that returns the same verdict many times; it is ignored
	// when Err is set.
	Detail string
}

// Checker is one configured plugin as the pipeline sees it (step 5).
// Implementations must be safe for concurrent use, and must not keep the
// *CheckInput after Check returns: the pipeline reuses it.
type Checker interface {
	// Name is the [policies.<name>] key.
	Name() string
	// Matches reports whether the plugin applies to this app and tool.
	Matches(app, tool string) bool
	// CanApprove reports whether an allow from this plugin may lift a
	// baseline ask.
	CanApprove() bool
	// Check runs the plugin. It never returns an error: a failure is a
	// verdict (the plugin's on_error) with Err set.
	Check(ctx context.Context, in *CheckInput) PluginVerdict
}

// ObserveInput is what a plugin sees after a call ran (the "observe" event).
type ObserveInput struct {
	Session   string
	Labels    []string
	Server    string
	App       string
	Connector string
	Tool      *hints.Tool
	Arguments json.RawMessage
	Hints     hints.Set
	Caps      hints.Capabilities
	// Result is a bounded summary of the tool result (text content,
	// truncated); IsError mirrors the MCP result's isError.
	Result  string
	IsError bool
	// ResultFull is the result cut at the largest result_limit_kb of the
	// observing policies ("" when none asked for more than Result): a
	// policy that asked for more sees up to its own limit of it.
	ResultFull string
	// Context is what is known of the server's paths; nil when nothing is.
	Context *ServerContext
	// State holds the session's plugin states; nil when there is none.
	State StateStore
}

// ObserveResult is a plugin's answer to observe: labels to add to the session.
type ObserveResult struct {
	Labels []string
	Err    error
	// StateUpdate and State: as in PluginVerdict.
	StateUpdate *session.StateUpdate
	State       *session.PluginState
}

// Observer is a plugin that handles the observe event.
type Observer interface {
	Name() string
	Matches(app, tool string) bool
	Observe(ctx context.Context, in *ObserveInput) ObserveResult
}

// ListInput is a server's tool list as a plugin sees it (the "list" event):
// the tools of one app that the visibility gate lets through.
type ListInput struct {
	Session string
	Labels  []string
	Server  string
	App     string
	Tools   []*hints.Tool
	// Hints are the effective hints of Tools, index for index (after
	// trust, drift and config overrides, as a check sees them). A tool
	// without an entry is shown with no hints: the spec's pessimistic
	// defaults.
	Hints []hints.Set
	// State holds the session's plugin states; nil when there is none.
	State StateStore
}

// Lister is a plugin that handles the list event and may hide tools.
type Lister interface {
	Name() string
	// List returns the names of tools to hide. On failure it returns an
	// error and the caller applies the plugin's on_error policy.
	List(ctx context.Context, in *ListInput) (hide []string, err error)
}
