package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// SystemRequirementsPaths are where an admin's requirements files live:
// Codex's, then toolwarden's own. Missing files are skipped.
var SystemRequirementsPaths = []string{
	"/etc/codex/requirements.toml",
	"/etc/toolwarden/requirements.toml",
}

// RequirementsEnv names the env var that adds a requirements file.
const RequirementsEnv = "TOOLWARDEN_REQUIREMENTS"

// RequirementsPaths lists the requirements files in force: the system files
// that exist, the file named by $TOOLWARDEN_REQUIREMENTS (read with getenv;
// nil: os.Getenv), then extra (from a --requirements flag). Named files must
// exist; system ones need not.
func RequirementsPaths(getenv func(string) string, extra ...string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	var out []string
	for _, p := range SystemRequirementsPaths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	if p := getenv(RequirementsEnv); p != "" {
		out = append(out, p)
	}
	return append(out, extra...)
}

// Requirements is one admin requirements file: a floor no user or project
// layer can lower. It reads Codex's requirements.toml keys (managed
// [apps.<id>] enabled = false and tool approval modes,
// allowed_approval_policies, allowed_sandbox_modes, the [mcp_servers]
// allow-list by name and identity) plus toolwarden's:
// [[allowed_servers]], required_policies with their [policies.*] tables,
// and max_trust.
type Requirements struct {
	File string

	AllowedApprovalPolicies []string
	AllowedSandboxModes     []string
	AllowedServers          []AllowedServer
	// Servers is Codex's [mcp_servers] allow-list by name and identity;
	// nil when the file has none.
	Servers map[string]*ServerRequirement
	// RequiredPolicies name [policies.*] tables of this file that always run.
	RequiredPolicies []string
	MaxTrust         string
	// ApprovalChannel pins approval_channel for every call (channel.go).
	ApprovalChannel ChannelSetting

	// apps and policies are the file's [apps.*] and [policies.*] tables.
	apps     map[string]*App
	policies []*Policy
	keys     map[string]Position
}

// AllowedServer is one [[allowed_servers]] entry: a stdio server whose
// command (and args, as a prefix) match, or an HTTP server whose URL does.
// Env and Cwd hold a stdio server's environment and directory as
// ServerRequirement's do: a variable that loads code runs only when named.
type AllowedServer struct {
	Command string
	Args    []string
	URL     string
	Env     map[string]ValueMatcher
	Cwd     *ValueMatcher
	Pos     Position
}

func (a AllowedServer) matches(s *Server) bool {
	if a.URL != "" {
		return s.URL != "" && strings.TrimRight(s.URL, "/") == strings.TrimRight(a.URL, "/")
	}
	if s.Command == "" || s.Command != a.Command || len(s.Args) < len(a.Args) {
		return false
	}
	return slices.Equal(s.Args[:len(a.Args)], a.Args)
}

// at is where key was written in the requirements file.
func (r *Requirements) at(key string) Position {
	if p, ok := r.keys[key]; ok {
		return p
	}
	return Position{File: r.File}
}

// LoadRequirements reads one requirements file.
func LoadRequirements(path string) (*Requirements, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &LoadError{Diagnostics: []Diagnostic{{Pos: Position{File: path}, Message: fmt.Sprintf("cannot read requirements file: %v", err)}}}
	}
	return ParseRequirements(path, data)
}

// ParseRequirements parses a requirements file's text; name is shown in
// diagnostics and in every "required by".
func ParseRequirements(name string, data []byte) (*Requirements, error) {
	raw := map[string]any{}
	if _, err := toml.Decode(string(data), &raw); err != nil {
		return nil, &LoadError{Diagnostics: syntaxDiagnostics(name, data, err)}
	}
	r := &Requirements{File: name, keys: locateKeys(name, data)}
	l := &loader{layers: []*layer{{name: name, raw: raw, keys: r.keys}}}
	rest := map[string]any{}
	for k, v := range raw {
		switch k {
		case "allowed_approval_policies":
			r.AllowedApprovalPolicies = l.enumList(k, v, "approval policy", "untrusted", "on-failure", "on-request", "never", "granular")
		case "allowed_sandbox_modes":
			r.AllowedSandboxModes = l.enumList(k, v, "sandbox mode", "read-only", "workspace-write", "danger-full-access")
		case "required_policies":
			r.RequiredPolicies = l.strList(k, v)
		case "max_trust":
			r.MaxTrust = l.trust(k, v)
		case "approval_channel":
			r.ApprovalChannel = l.approvalChannel(k, v)
		case "allowed_servers":
			arr, ok := asArray(v)
			if !ok {
				l.errorf(k, "must be an array of tables, not %s", describe(v))
				continue
			}
			for i, e := range arr {
				p := fmt.Sprintf("%s[%d]", k, i)
				t, ok := l.asTable(p, e)
				if !ok {
					continue
				}
				a := AllowedServer{Pos: l.pos(k)}
				for kk, vv := range t {
					switch kk {
					case "command":
						a.Command = l.str(p+"."+kk, vv)
					case "args":
						a.Args = l.strList(p+"."+kk, vv)
					case "url":
						a.URL = l.str(p+"."+kk, vv)
					case "env", "cwd":
						// Read below, once the command is known.
					default:
						l.errorf(k, "unknown key %s in [[allowed_servers]] (want command, args, env and cwd, or url)", quote(kk))
					}
				}
				if (a.Command == "") == (a.URL == "") {
					l.errorf(k, "each [[allowed_servers]] needs exactly one of command or url")
				} else {
					rule := l.envCwdRule(p, t, a.Command)
					a.Env, a.Cwd = rule.Env, rule.Cwd
				}
				r.AllowedServers = append(r.AllowedServers, a)
			}
		case "mcp_servers":
			r.Servers = l.serverRequirements(k, v)
		case "apps", "policies":
			rest[k] = v
		default:
			// Codex's other requirements (exec-policy rules, sandbox network,
			// web search, residency) govern what Codex itself runs, not MCP
			// tool calls: not ours to interpret.
		}
	}
	if l.hasErrors() {
		return nil, &LoadError{Diagnostics: l.diags}
	}
	// Decode apps and policies exactly as a config layer would, but with the
	// requirements file's own positions.
	tl := &loader{layers: []*layer{{name: name, raw: rest, keys: r.keys}}}
	cfg := tl.interpret(rest)
	if tl.hasErrors() {
		return nil, &LoadError{Diagnostics: tl.diags}
	}
	r.apps, r.policies = cfg.Apps, cfg.Policies
	for _, n := range r.RequiredPolicies {
		if !slices.ContainsFunc(r.policies, func(p *Policy) bool { return p.Name == n }) {
			return nil, &LoadError{Diagnostics: []Diagnostic{{Pos: r.at("required_policies"), Path: "required_policies",
				Message: fmt.Sprintf("names %s, which this file does not define: add a [policies.%s] table here", quote(n), quoteKey(n))}}}
		}
	}
	return r, nil
}

// Override is a user setting a requirement replaced.
type Override struct {
	Path     string   // the key path, e.g. apps.github.enabled
	User     Position // where the user layer set it; File "" if it did not
	Required Position // the requirement that decided
	Message  string
}

func (o Override) String() string {
	at := o.User.String()
	if o.User.File == "" && o.User.Line == 0 {
		at = "(not set)"
	}
	return fmt.Sprintf("%s: %s: %s (required by %s)", at, o.Path, o.Message, o.Required)
}

// RequiredBy reports whether a requirement decided the key path, and
// where.
func (c *Config) RequiredBy(path string) (Position, bool) {
	p, ok := c.required[path]
	return p, ok
}

// LoadWithRequirements loads the config layers (the embedded default when
// there are none) and applies every requirements file to the result.
func LoadWithRequirements(requirements []string, paths ...string) (*Config, error) {
	var cfg *Config
	if len(paths) == 0 {
		cfg = Default()
	} else {
		var err error
		if cfg, err = Load(paths...); err != nil {
			return nil, err
		}
	}
	if len(requirements) == 0 {
		return cfg, nil
	}
	reqs := make([]*Requirements, 0, len(requirements))
	for _, p := range requirements {
		r, err := LoadRequirements(p)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, r)
	}
	return cfg.apply(reqs)
}

// ApplyRequirements applies parsed requirements to a copy of cfg.
func (c *Config) ApplyRequirements(reqs ...*Requirements) (*Config, error) {
	return c.clone().apply(reqs)
}

func (c *Config) clone() *Config {
	n := *c
	n.Apps = make(map[string]*App, len(c.Apps))
	for k, a := range c.Apps {
		ac := *a
		ac.RequiredModes = maps.Clone(a.RequiredModes)
		ac.Tools = make(map[string]*AppTool, len(a.Tools))
		for tk, t := range a.Tools {
			tc := *t
			ac.Tools[tk] = &tc
		}
		n.Apps[k] = &ac
	}
	n.Servers = make(map[string]*Server, len(c.Servers))
	for k, s := range c.Servers {
		sc := *s
		n.Servers[k] = &sc
	}
	n.Policies = make([]*Policy, len(c.Policies))
	for i, p := range c.Policies {
		pc := *p
		n.Policies[i] = &pc
	}
	n.Warnings = slices.Clone(c.Warnings)
	n.Overrides = slices.Clone(c.Overrides)
	n.serverLists = slices.Clip(c.serverLists)
	n.requirementsFiles = slices.Clip(c.requirementsFiles)
	n.required = make(map[string]Position, len(c.required))
	for k, v := range c.required {
		n.required[k] = v
	}
	n.channelPins = c.cloneChannelPins()
	return &n
}

var trustRank = map[string]int{"none": 0, "pinned": 1, "full": 2}

// apply enforces reqs on c in place (c is fresh from Load or a clone).
func (c *Config) apply(reqs []*Requirements) (*Config, error) {
	if c.required == nil {
		c.required = map[string]Position{}
	}
	var errs []Diagnostic
	overrideAt := func(path string, at, req Position, msg string) {
		c.required[path] = req
		c.Overrides = append(c.Overrides, Override{Path: path, User: at, Required: req, Message: msg})
	}
	userFiles := len(c.Files)
	for _, r := range reqs {
		c.Files = append(c.Files, r.File)
		c.requirementsFiles = append(c.requirementsFiles, r.File)
		errs = append(errs, c.checkAllowedModes(r, userFiles)...)
		c.applyAppRequirements(r, overrideAt)
		c.applyAccessRequirements(r) // principals.go
		c.applyServerRequirements(r, overrideAt)
		c.clampTrust(r, overrideAt)
		c.pinChannels(r, overrideAt)
		c.applyRequiredPolicies(r, overrideAt)
	}
	if len(errs) > 0 {
		return nil, &LoadError{Diagnostics: errs}
	}
	return c, nil
}

// checkAllowedModes reports an approval_policy or sandbox_mode that r's
// allowed lists refuse; userFiles is how many of c.Files are the user's.
func (c *Config) checkAllowedModes(r *Requirements, userFiles int) []Diagnostic {
	var errs []Diagnostic
	if len(r.AllowedApprovalPolicies) > 0 {
		req := r.at("allowed_approval_policies")
		v, path := c.ApprovalPolicy.Value, "approval_policy"
		if c.ApprovalPolicy.Pos.File != "" && c.ApprovalPolicy.Pos.Line > 0 {
			if _, ok := c.keys[path]; !ok {
				path = "profiles." + quoteKey(c.Profile) + ".approval_policy"
			}
		}
		switch {
		case v == "" && !slices.Contains(r.AllowedApprovalPolicies, "on-request"):
			// Unset means on-request. Picking an allowed value for the
			// user could pick a looser one (never), so ask them to.
			at := Position{File: r.File}
			if userFiles > 0 {
				at = Position{File: c.Files[userFiles-1]}
			}
			errs = append(errs, Diagnostic{Pos: at, Path: "approval_policy",
				Message: fmt.Sprintf("unset (on-request), which allowed_approval_policies = [%s] required by %s does not allow; set approval_policy to one of those",
					quotedList(r.AllowedApprovalPolicies), req)})
		case v != "" && !slices.Contains(r.AllowedApprovalPolicies, v):
			errs = append(errs, Diagnostic{Pos: c.ApprovalPolicy.Pos, Path: path,
				Message: fmt.Sprintf("%s is not allowed: allowed_approval_policies = [%s] required by %s; choose one of those or remove the key",
					quote(v), quotedList(r.AllowedApprovalPolicies), req)})
		}
	}
	if len(r.AllowedSandboxModes) > 0 && c.SandboxMode.Value != "" && !slices.Contains(r.AllowedSandboxModes, c.SandboxMode.Value) {
		req := r.at("allowed_sandbox_modes")
		errs = append(errs, Diagnostic{Pos: c.SandboxMode.Pos, Path: "sandbox_mode",
			Message: fmt.Sprintf("%s is not allowed: allowed_sandbox_modes = [%s] required by %s; choose one of those or remove the key",
				quote(c.SandboxMode.Value), quotedList(r.AllowedSandboxModes), req)})
	}
	return errs
}

// applyAppRequirements enforces r's [apps.*] tables: managed disables of
// apps and tools, and managed tool approval modes.
func (c *Config) applyAppRequirements(r *Requirements, overrideAt func(path string, at, req Position, msg string)) {
	for _, id := range sortedAppIDs(r.apps) {
		ra := r.apps[id]
		a := c.Apps[id]
		if ra.Enabled != nil && !*ra.Enabled {
			a = c.disableApp(r, id, a, overrideAt)
		}
		for _, tn := range sortedToolNames(ra.Tools) {
			a = c.applyToolRequirement(r, id, a, tn, ra.Tools[tn], overrideAt)
		}
	}
}

// disableApp enforces a managed disable of app id (a, nil when the user
// never configured it) and returns the app.
func (c *Config) disableApp(r *Requirements, id string, a *App, overrideAt func(path string, at, req Position, msg string)) *App {
	p := "apps." + quoteKey(id)
	existed := a != nil
	if a == nil {
		// A managed disable is enforced even for an app the user
		// never configured; the rest of the app falls back to
		// _default as before.
		a = &App{ID: id, Pos: r.at(p)}
		c.Apps[id] = a
	}
	if existed && Bool(a.Enabled, true) {
		overrideAt(p+".enabled", c.keys[p+".enabled"], r.at(p+".enabled"), "app disabled by requirements")
	}
	c.required[p+".enabled"] = r.at(p + ".enabled")
	f := false
	a.Enabled = &f
	return a
}

// applyToolRequirement enforces r's table for tool tn of app id (a, nil
// when neither the user nor an earlier requirement made it) and returns
// the app.
func (c *Config) applyToolRequirement(r *Requirements, id string, a *App, tn string, rt *AppTool, overrideAt func(path string, at, req Position, msg string)) *App {
	p := "apps." + quoteKey(id)
	if rt.Enabled != nil && !*rt.Enabled {
		// Ours: a managed tool disable, enforced like the app's.
		a = c.requiredApp(id, a, r.at(p))
		t := a.tool(tn, r.at(p))
		ep := p + ".tools." + quoteKey(tn) + ".enabled"
		if t.Enabled != nil && *t.Enabled {
			overrideAt(ep, c.keys[ep], r.at(ep), "tool disabled by requirements")
		}
		f := false
		t.Enabled = &f
		c.required[ep] = r.at(ep)
	}
	if rt.ApprovalMode == ModeUnset {
		return a
	}
	a = c.requiredApp(id, a, r.at(p))
	tp := p + ".tools." + quoteKey(tn) + ".approval_mode"
	// The managed mode restricts whatever the user's layers
	// resolve to for the tool (at decision time, where every
	// level is known), as Codex's restrict_to does. It is kept
	// apart from Tools so that it does not shadow a user table
	// keyed by the tool's title.
	if t := a.Tools[tn]; t != nil && t.ApprovalMode != ModeUnset {
		if m := RestrictMode(rt.ApprovalMode, t.ApprovalMode); m != t.ApprovalMode {
			overrideAt(tp, c.keys[tp], r.at(tp), fmt.Sprintf("approval mode %s restricted to %s", quote(string(t.ApprovalMode)), quote(string(m))))
		}
	}
	if a.RequiredModes == nil {
		a.RequiredModes = map[string]Mode{}
	}
	if m, ok := a.RequiredModes[tn]; ok {
		a.RequiredModes[tn] = RestrictMode(m, rt.ApprovalMode)
	} else {
		a.RequiredModes[tn] = rt.ApprovalMode
	}
	c.required[tp] = r.at(tp)
	return a
}

// clampTrust lowers every trust above r's max_trust to it, with a warning.
func (c *Config) clampTrust(r *Requirements, overrideAt func(path string, at, req Position, msg string)) {
	if r.MaxTrust == "" {
		return
	}
	max := trustRank[r.MaxTrust]
	req := r.at("max_trust")
	clamp := func(path string, t *string) {
		if *t != "" && trustRank[*t] > max {
			overrideAt(path, c.keys[path], req, fmt.Sprintf("trust %s lowered to %s", quote(*t), quote(r.MaxTrust)))
			c.Warnings = append(c.Warnings, Diagnostic{Pos: c.keys[path], Path: path, Severity: SeverityWarning,
				Message: fmt.Sprintf("trust %s lowered to %s: max_trust required by %s", quote(*t), quote(r.MaxTrust), req)})
			*t = r.MaxTrust
		}
	}
	clamp("apps._default.trust", &c.Default.Trust)
	for _, id := range sortedAppIDs(c.Apps) {
		clamp("apps."+quoteKey(id)+".trust", &c.Apps[id].Trust)
	}
	for _, name := range sortedServerNames(c.Servers) {
		clamp("mcp_servers."+quoteKey(name)+".trust", &c.Servers[name].Trust)
	}
}

// applyRequiredPolicies adds r's [policies.*] tables: one the user has
// not defined is added; a required one replaces the user's of its name.
func (c *Config) applyRequiredPolicies(r *Requirements, overrideAt func(path string, at, req Position, msg string)) {
	for _, rp := range r.policies {
		pp := "policies." + quoteKey(rp.Name)
		required := slices.Contains(r.RequiredPolicies, rp.Name)
		i := slices.IndexFunc(c.Policies, func(p *Policy) bool { return p.Name == rp.Name })
		if !required {
			if i < 0 {
				c.Policies = append(c.Policies, rp)
			}
			continue
		}
		// A required policy runs as the requirements file defines it:
		// a user table of the same name neither disables nor amends it.
		cp := *rp
		t := true
		cp.Enabled = &t
		if i >= 0 {
			overrideAt(pp, c.keys[pp], r.at(pp), "policy replaced by the required one")
			c.Policies[i] = &cp
		} else {
			c.Policies = append(c.Policies, &cp)
		}
		c.required[pp] = r.at(pp)
	}
}

// RestrictMode combines a managed approval mode with a requested one as
// Codex's AppToolApproval::restrict_to does: prompt wins, approve is the
// identity, and auto with writes gives prompt.
func RestrictMode(managed, requested Mode) Mode {
	switch {
	case requested == ModeUnset, requested == managed, requested == ModeApprove:
		return managed
	case managed == ModeApprove:
		return requested
	default:
		return ModePrompt
	}
}

func quotedList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = quote(v)
	}
	return strings.Join(q, ", ")
}

func sortedAppIDs(m map[string]*App) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func sortedServerNames(m map[string]*Server) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// requiredApp returns a, or a new [apps.<id>] table for a requirement to
// write into. Codex enables an app whose table exists; a table made here
// must not, so it keeps _default's enablement.
func (c *Config) requiredApp(id string, a *App, at Position) *App {
	if a != nil {
		return a
	}
	a = &App{ID: id, Pos: at, Enabled: c.Default.Enabled}
	if a.Enabled == nil {
		t := true
		a.Enabled = &t
	}
	c.Apps[id] = a
	return a
}

// tool returns the app's table for tool name, made if missing.
func (a *App) tool(name string, at Position) *AppTool {
	if a.Tools == nil {
		a.Tools = map[string]*AppTool{}
	}
	t := a.Tools[name]
	if t == nil {
		t = &AppTool{Pos: at}
		a.Tools[name] = t
	}
	return t
}

func sortedToolNames(m map[string]*AppTool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
