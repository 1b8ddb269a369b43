package policy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
)

// Rules is a Config compiled for fast lookups. Build it once per config with
// Compile; it is immutable and safe for concurrent use.
type Rules struct {
	def     appRules // [apps._default] as the rules of an app with no table
	apps    map[string]*appRules
	servers map[string]*serverRules

	policy          string // approval_policy value for the trace
	never           bool
	elicitationsOff bool // granular mcp_elicitations = false: traced, asks stay asks (Codex)
	fullAccess      bool // sandbox_mode = "danger-full-access"
	policySrc       string
	anyAccess       bool // some app or tool names principals, groups or approvers (principals.go)
}

type appRules struct {
	id         string
	hasTable   bool
	enabled    bool
	enabledSrc string

	destructiveEnabled bool
	destructiveSrc     string
	openWorldEnabled   bool
	openWorldSrc       string

	defaultToolsEnabled    *bool
	defaultToolsEnabledSrc string

	readOnly bool
	readSrc  string

	mode    config.Mode
	modeSrc string

	trust    hints.Trust
	hasTrust bool
	trustSrc string

	hints *hints.Set // nil when the app sets none
	tools map[string]*toolRules
	// required are managed modes by raw tool name (requirements).
	required map[string]requiredMode
	// access are the app's principal rules (its table's, then
	// requirements'), toolAccess requirements' by raw tool name.
	access     []accessRule
	toolAccess map[string][]accessRule
}

type toolRules struct {
	enabled    *bool
	enabledSrc string
	mode       config.Mode
	modeSrc    string
	hints      *hints.Set
	access     *accessRule // principals.go
}

// requiredMode is a requirements file's managed mode for one tool.
type requiredMode struct {
	mode config.Mode
	src  string
}

type serverRules struct {
	name string
	// Config paths for the trace, rendered once.
	enabledSrc, enabledToolsSrc, disabledToolsSrc string
	enabled                                       bool
	enabledTools                                  map[string]bool // nil: all
	disabledTools                                 map[string]bool
	mode                                          config.Mode
	modeSrc                                       string
	tools                                         map[string]*toolRules // approval_mode only
	trust                                         hints.Trust
	hasTrust                                      bool
	trustSrc                                      string
	connectors                                    bool
}

// Compile turns a loaded Config into Rules. It fails only on values that
// config validation should already have refused (an unknown trust level).
func Compile(cfg *config.Config) (*Rules, error) {
	r := &Rules{apps: map[string]*appRules{}, servers: map[string]*serverRules{}}
	d := &cfg.Default
	r.def = appRules{
		enabled:            config.Bool(d.Enabled, true),
		enabledSrc:         srcOr(d.Enabled != nil, "apps._default.enabled", "default"),
		destructiveEnabled: config.Bool(d.DestructiveEnabled, true),
		destructiveSrc:     srcOr(d.DestructiveEnabled != nil, "apps._default.destructive_enabled", "default"),
		openWorldEnabled:   config.Bool(d.OpenWorldEnabled, true),
		openWorldSrc:       srcOr(d.OpenWorldEnabled != nil, "apps._default.open_world_enabled", "default"),
		mode:               d.DefaultToolsApprovalMode,
		modeSrc:            "apps._default.default_tools_approval_mode",
	}
	if d.Trust != "" {
		t, err := hints.ParseTrust(d.Trust)
		if err != nil {
			return nil, fmt.Errorf("apps._default.trust: %w", err)
		}
		r.def.trust, r.def.hasTrust, r.def.trustSrc = t, true, required(cfg, "apps._default.trust")
	}
	for id, a := range cfg.Apps {
		ar, err := r.compileApp(cfg, id, a)
		if err != nil {
			return nil, err
		}
		r.apps[id] = ar
	}
	for name, s := range cfg.Servers {
		sr, err := compileServer(cfg, name, s)
		if err != nil {
			return nil, err
		}
		r.servers[name] = sr
	}
	ap := cfg.ApprovalPolicy
	r.policy = ap.Value
	if r.policy == "" {
		r.policy = "on-request"
	}
	r.policySrc = required(cfg, "approval_policy")
	switch {
	case ap.Value == "never":
		r.never = true
	case ap.Granular != nil && !ap.Granular.MCPElicitations:
		r.elicitationsOff = true
		r.policy = "granular"
	case ap.Granular != nil:
		r.policy = "granular"
	}
	r.fullAccess = cfg.SandboxMode.FullAccess()
	if r.never && r.fullAccess {
		r.policy = "never with sandbox_mode danger-full-access"
		r.policySrc = "approval_policy, sandbox_mode"
	}
	return r, nil
}

func (r *Rules) compileApp(cfg *config.Config, id string, a *config.App) (*appRules, error) {
	p := "apps." + quoteKey(id)
	ar := &appRules{
		id:                 id,
		hasTable:           true,
		enabled:            config.Bool(a.Enabled, true),
		enabledSrc:         srcOr(a.Enabled != nil, required(cfg, p+".enabled"), p+" (table exists)"),
		destructiveEnabled: r.def.destructiveEnabled,
		destructiveSrc:     r.def.destructiveSrc,
		openWorldEnabled:   r.def.openWorldEnabled,
		openWorldSrc:       r.def.openWorldSrc,
		mode:               a.DefaultToolsApprovalMode,
		modeSrc:            p + ".default_tools_approval_mode",
		readOnly:           config.Bool(a.ReadOnly, false),
		readSrc:            p + ".read_only",
	}
	if a.DestructiveEnabled != nil {
		ar.destructiveEnabled, ar.destructiveSrc = *a.DestructiveEnabled, p+".destructive_enabled"
	}
	if a.OpenWorldEnabled != nil {
		ar.openWorldEnabled, ar.openWorldSrc = *a.OpenWorldEnabled, p+".open_world_enabled"
	}
	if a.DefaultToolsEnabled != nil {
		ar.defaultToolsEnabled, ar.defaultToolsEnabledSrc = a.DefaultToolsEnabled, p+".default_tools_enabled"
	}
	if a.Trust != "" {
		t, err := hints.ParseTrust(a.Trust)
		if err != nil {
			return nil, fmt.Errorf("%s.trust: %w", p, err)
		}
		ar.trust, ar.hasTrust, ar.trustSrc = t, true, required(cfg, p+".trust")
	}
	if !a.Hints.Empty() {
		h := a.Hints
		ar.hints = &h
	}
	for name, m := range a.RequiredModes {
		if ar.required == nil {
			ar.required = map[string]requiredMode{}
		}
		ar.required[name] = requiredMode{m, required(cfg, p+".tools."+quoteKey(name)+".approval_mode")}
	}
	if len(a.Tools) > 0 {
		ar.tools = make(map[string]*toolRules, len(a.Tools))
		for name, t := range a.Tools {
			tp := p + ".tools." + quoteKey(name)
			tr := &toolRules{enabled: t.Enabled, enabledSrc: required(cfg, tp+".enabled"), mode: t.ApprovalMode, modeSrc: tp + ".approval_mode"}
			if !t.Hints.Empty() {
				h := t.Hints
				tr.hints = &h
			}
			ar.tools[name] = tr
		}
	}
	r.compileAccess(cfg, p, a, ar) // principals.go
	return ar, nil
}

func compileServer(cfg *config.Config, name string, s *config.Server) (*serverRules, error) {
	p := "mcp_servers." + quoteKey(name)
	sr := &serverRules{
		name:             name,
		enabledSrc:       required(cfg, p+".enabled"),
		enabledToolsSrc:  p + ".enabled_tools",
		disabledToolsSrc: p + ".disabled_tools",
		enabled:          config.Bool(s.Enabled, true),
		mode:             s.DefaultToolsApprovalMode,
		modeSrc:          p + ".default_tools_approval_mode",
		connectors:       s.Connectors,
	}
	if s.EnabledTools != nil {
		sr.enabledTools = make(map[string]bool, len(s.EnabledTools))
		for _, t := range s.EnabledTools {
			sr.enabledTools[t] = true
		}
	}
	if len(s.DisabledTools) > 0 {
		sr.disabledTools = make(map[string]bool, len(s.DisabledTools))
		for _, t := range s.DisabledTools {
			sr.disabledTools[t] = true
		}
	}
	if len(s.Tools) > 0 {
		sr.tools = make(map[string]*toolRules, len(s.Tools))
		for tn, t := range s.Tools {
			sr.tools[tn] = &toolRules{mode: t.ApprovalMode, modeSrc: p + ".tools." + quoteKey(tn) + ".approval_mode"}
		}
	}
	if s.Trust != "" {
		t, err := hints.ParseTrust(s.Trust)
		if err != nil {
			return nil, fmt.Errorf("%s.trust: %w", p, err)
		}
		sr.trust, sr.hasTrust, sr.trustSrc = t, true, required(cfg, p+".trust")
	}
	return sr, nil
}

// app returns the rules for app id: its table, or _default's.
func (r *Rules) app(id string) *appRules {
	if a, ok := r.apps[id]; ok {
		return a
	}
	return &r.def
}

// Servers lists the configured server names, sorted.
func (r *Rules) Servers() []string {
	out := make([]string, 0, len(r.servers))
	for n := range r.servers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func srcOr(set bool, src, def string) string {
	if set {
		return src
	}
	return def
}

// quoteKey writes a TOML key as a user would type it in a path.
func quoteKey(k string) string {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return strconv.Quote(k)
		}
	}
	if k == "" {
		return `""`
	}
	return k
}

// required is a trace source: the key path, and the requirements file and
// line that decided it when one did.
func required(cfg *config.Config, path string) string {
	if at, ok := cfg.RequiredBy(path); ok {
		return path + ", required by " + at.String()
	}
	return path
}

// requiredNote is what a reason adds when its source was a requirement.
func requiredNote(src string) string {
	if at := requiredBy(src); at != "" {
		return " (required by " + at + ")"
	}
	return ""
}

// requiredBy is the requirements file and line in a source that required
// (see required), or "". A source is built from config paths, never from
// what a server says, so its text can be read back.
func requiredBy(src string) string {
	if _, at, ok := strings.Cut(src, ", required by "); ok {
		return at
	}
	return ""
}
