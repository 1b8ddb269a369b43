package config

import (
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/internal/hints"
)

// This file is the schema: which keys the tables we own may hold, with
// Codex's types (codex-rs/config/src/types.rs and mcp_types.rs, all
// deny_unknown_fields) plus toolwarden's own keys.

// interpret reads the merged tree into a Config.
func (l *loader) interpret(root map[string]any) *Config {
	cfg := &Config{Apps: map[string]*App{}, Servers: map[string]*Server{}}
	apPath := "approval_policy"
	apValue, hasAP := root[apPath]
	sbPath := "sandbox_mode"
	sbValue, hasSB := root[sbPath]
	if v, ok := root["profile"]; ok {
		if name := l.str("profile", v); name != "" {
			cfg.Profile = name
			p, v, ok, found := l.profileKey(root, name, "approval_policy")
			switch {
			case !found:
				l.errorf("profile", "profile %s is not defined: add a [profiles.%s] table or remove profile (Codex refuses to start with it)", quote(name), quoteKey(name))
			case ok:
				apPath, apValue, hasAP = p, v, true
			}
			if p, v, ok, _ := l.profileKey(root, name, "sandbox_mode"); ok {
				if hasSB {
					// Codex refuses a bad value even where a profile replaces it.
					l.enum(sbPath, sbValue, "sandbox mode", sandboxModes...)
				}
				sbPath, sbValue, hasSB = p, v, true
			}
		}
	}
	if hasAP {
		cfg.ApprovalPolicy = l.approvalPolicy(apPath, apValue)
	}
	if hasSB {
		cfg.SandboxMode = SandboxMode{Value: l.enum(sbPath, sbValue, "sandbox mode", sandboxModes...), Pos: l.pos(sbPath)}
	}
	if v, ok := root["approval_channel"]; ok {
		cfg.Channel = l.approvalChannel("approval_channel", v)
	}
	if v, ok := root["webhook"]; ok {
		cfg.Webhook = l.webhook("webhook", v)
	}
	if v, ok := root["audit"]; ok {
		cfg.Audit = l.audit("audit", v)
	}
	cfg.Serve = DefaultServe()
	if v, ok := root["serve"]; ok {
		cfg.Serve = l.serve("serve", v)
	}
	if v, ok := root["apps"]; ok {
		l.apps(cfg, v)
	}
	if v, ok := root["mcp_servers"]; ok {
		l.tableOfTables("mcp_servers", v, func(p, name string, t map[string]any) {
			cfg.Servers[name] = l.server(p, name, t)
		})
	}
	if v, ok := root["policies"]; ok {
		cfg.Policies = l.policies(v)
	}
	return cfg
}

// profileKey finds profiles.<name>.<key>. found reports whether the profile
// exists; ok whether it sets key.
func (l *loader) profileKey(root map[string]any, name, key string) (path string, v any, ok, found bool) {
	profiles, _ := root["profiles"].(map[string]any)
	prof, found := profiles[name].(map[string]any)
	if !found {
		return "", nil, false, false
	}
	v, ok = prof[key]
	return joinKey(joinKey("profiles", name), key), v, ok, true
}

// sandboxModes are Codex's SandboxMode values (kebab-case). toolwarden reads
// sandbox_mode only because Codex's approval_policy = "never" means "run
// every MCP call without asking" under danger-full-access.
var sandboxModes = []string{"read-only", "workspace-write", "danger-full-access"}

var approvalPolicies = []string{"untrusted", "on-failure", "on-request", "never"}

// approvalPolicy reads Codex's AskForApproval: a kebab-case string, or the
// externally tagged { granular = { ... } }.
func (l *loader) approvalPolicy(p string, v any) ApprovalPolicy {
	ap := ApprovalPolicy{Pos: l.pos(p)}
	switch x := v.(type) {
	case string:
		if x == "granular" {
			l.errorf(p, `"granular" takes settings: write approval_policy = { granular = { sandbox_approval = true, rules = true, mcp_elicitations = true } }`)
			return ap
		}
		ap.Value = l.enum(p, v, "approval policy", approvalPolicies...)
	case map[string]any:
		var g *Granular
		l.table(p, x, fields{"granular": func(gp string, v any) { g = l.granular(gp, v) }})
		if _, ok := x["granular"]; !ok && len(x) == 0 {
			l.errorf(p, "empty table: set a policy (%s) or { granular = { ... } }", orList(approvalPolicies))
		}
		if g != nil {
			ap.Value, ap.Granular = "granular", g
		}
	default:
		l.errorf(p, "expected a string (%s) or a { granular = { ... } } table, got %s", orList(approvalPolicies), describe(v))
	}
	return ap
}

// granular reads GranularApprovalConfig. sandbox_approval, rules and
// mcp_elicitations have no serde default in Codex, so they are required.
func (l *loader) granular(p string, v any) *Granular {
	g := &Granular{}
	t, ok := l.table(p, v, fields{
		"sandbox_approval":    func(p string, v any) { g.SandboxApproval = l.bool(p, v) },
		"rules":               func(p string, v any) { g.Rules = l.bool(p, v) },
		"mcp_elicitations":    func(p string, v any) { g.MCPElicitations = l.bool(p, v) },
		"skill_approval":      func(p string, v any) { g.SkillApproval = l.bool(p, v) },
		"request_permissions": func(p string, v any) { g.RequestPermissions = l.bool(p, v) },
	})
	if !ok {
		return nil
	}
	for _, k := range []string{"sandbox_approval", "rules", "mcp_elicitations"} {
		if _, ok := t[k]; !ok {
			l.errorf(p, "missing required key %s (granular needs sandbox_approval, rules and mcp_elicitations; true lets that kind of prompt through, false rejects it)", quote(k))
		}
	}
	return g
}

// apps reads [apps]: _default, and one table per app id.
func (l *loader) apps(cfg *Config, v any) {
	l.tableOfTables("apps", v, func(p, id string, t map[string]any) {
		if id == "_default" {
			cfg.Default, cfg.HasDefault = l.appDefault(p, t), true
			return
		}
		cfg.Apps[id] = l.app(p, id, t)
	})
}

func (l *loader) appDefault(p string, t map[string]any) AppDefault {
	d := AppDefault{}
	d.Pos, _ = l.firstPos(p)
	l.table(p, t, l.refuseAccess(fields{
		"enabled":                     func(p string, v any) { d.Enabled = l.boolPtr(p, v) },
		"destructive_enabled":         func(p string, v any) { d.DestructiveEnabled = l.boolPtr(p, v) },
		"open_world_enabled":          func(p string, v any) { d.OpenWorldEnabled = l.boolPtr(p, v) },
		"default_tools_approval_mode": func(p string, v any) { d.DefaultToolsApprovalMode = l.mode(p, v) },
		"approvals_reviewer":          func(p string, v any) { d.ApprovalsReviewer = l.approvalsReviewer(p, v) },
		"trust":                       func(p string, v any) { d.Trust = l.trust(p, v) },
		"approval_channel":            func(p string, v any) { d.ApprovalChannel = l.approvalChannel(p, v) },
	}))
	return d
}

func (l *loader) app(p, id string, t map[string]any) *App {
	a := &App{ID: id}
	a.Pos, _ = l.firstPos(p)
	l.table(p, t, l.withAccess(&a.Access, fields{
		"enabled":                     func(p string, v any) { a.Enabled = l.boolPtr(p, v) },
		"destructive_enabled":         func(p string, v any) { a.DestructiveEnabled = l.boolPtr(p, v) },
		"open_world_enabled":          func(p string, v any) { a.OpenWorldEnabled = l.boolPtr(p, v) },
		"default_tools_enabled":       func(p string, v any) { a.DefaultToolsEnabled = l.boolPtr(p, v) },
		"default_tools_approval_mode": func(p string, v any) { a.DefaultToolsApprovalMode = l.mode(p, v) },
		"approvals_reviewer":          func(p string, v any) { a.ApprovalsReviewer = l.approvalsReviewer(p, v) },
		"disable_tool_suggest":        func(p string, v any) { a.DisableToolSuggest = l.boolPtr(p, v) },
		"tools": func(p string, v any) {
			a.Tools = map[string]*AppTool{}
			l.tableOfTables(p, v, func(p, name string, t map[string]any) { a.Tools[name] = l.appTool(p, t) })
		},
		"links": func(p string, v any) {
			a.Links = map[string]*AppLink{}
			l.tableOfTables(p, v, func(p, name string, t map[string]any) { a.Links[name] = l.appLink(p, t) })
		},
		"read_only": func(p string, v any) { a.ReadOnly = l.boolPtr(p, v) },
		"trust":     func(p string, v any) { a.Trust = l.trust(p, v) },
		"hints":     func(p string, v any) { a.Hints = l.hints(p, v) },

		"approval_channel": func(p string, v any) { a.ApprovalChannel = l.approvalChannel(p, v) },
	}))
	return a
}

func (l *loader) appTool(p string, t map[string]any) *AppTool {
	at := &AppTool{}
	at.Pos, _ = l.firstPos(p)
	l.table(p, t, l.withAccess(&at.Access, fields{
		"enabled":       func(p string, v any) { at.Enabled = l.boolPtr(p, v) },
		"approval_mode": func(p string, v any) { at.ApprovalMode = l.mode(p, v) },
		"hints":         func(p string, v any) { at.Hints = l.hints(p, v) },
	}))
	return at
}

func (l *loader) appLink(p string, t map[string]any) *AppLink {
	al := &AppLink{}
	l.table(p, t, fields{
		"approvals_reviewer":          func(p string, v any) { al.ApprovalsReviewer = l.approvalsReviewer(p, v) },
		"default_tools_approval_mode": func(p string, v any) { al.DefaultToolsApprovalMode = l.mode(p, v) },
	})
	return al
}

// hints reads { readOnlyHint = true, reads_private_data = true, ... }: known
// hint names (see hints.Lookup) to booleans.
func (l *loader) hints(p string, v any) hints.Set {
	var set hints.Set
	t, ok := l.asTable(p, v)
	if !ok {
		return set
	}
	for _, name := range sortedKeys(t) {
		kp := joinKey(p, name)
		h, ok := hints.Lookup(name)
		if !ok {
			if dym := didYouMean(name, hintNames()); dym != "" {
				l.errorAt(kp, p, "unknown hint %s%s", quote(name), dym)
			} else {
				l.errorAt(kp, p, "unknown hint %s; known hints are %s", quote(name), strings.Join(hints.Names(), ", "))
			}
			continue
		}
		if b := l.boolPtr(kp, t[name]); b != nil {
			set.Put(h, hints.Of(*b))
		}
	}
	return set
}

// hintNames are the names accepted in hints tables, for suggestions.
func hintNames() []string {
	return append(hints.Names(), "readsPrivateData", "seesUntrustedContent", "canExfiltrate")
}

// server reads [mcp_servers.<name>] (Codex's RawMcpServerConfig), then
// checks the transport on the merged result, so a later layer may give a
// server only the keys it changes.
func (l *loader) server(p, name string, t map[string]any) *Server {
	s := &Server{Name: name}
	s.Pos, _ = l.firstPos(p)
	var startupMs *float64
	l.table(p, t, fields{
		"command":  func(p string, v any) { s.Command = l.str(p, v) },
		"args":     func(p string, v any) { s.Args = l.strList(p, v) },
		"env":      func(p string, v any) { s.Env = l.strMap(p, v) },
		"env_vars": func(p string, v any) { s.EnvVars = l.envVars(p, v) },
		"cwd":      func(p string, v any) { s.Cwd = l.str(p, v) },

		"url":                  func(p string, v any) { s.URL = l.str(p, v) },
		"bearer_token_env_var": func(p string, v any) { s.BearerTokenEnvVar = l.str(p, v) },
		"bearer_token": func(p string, v any) {
			l.errorf(p, "inline bearer tokens are not supported (a token in a config file leaks); put the token in an environment variable and set bearer_token_env_var = \"VAR_NAME\"")
		},
		"http_headers":        func(p string, v any) { s.HTTPHeaders = l.strMap(p, v) },
		"env_http_headers":    func(p string, v any) { s.EnvHTTPHeaders = l.strMap(p, v) },
		"http_headers_helper": func(p string, v any) { s.HTTPHeadersHelper = l.str(p, v) },
		"auth":                func(p string, v any) { s.Auth = l.enum(p, v, "auth method", "oauth", "chatgpt") },
		"scopes":              func(p string, v any) { s.Scopes = l.strList(p, v) },
		"oauth_resource":      func(p string, v any) { s.OAuthResource = l.str(p, v) },
		"oauth":               func(p string, v any) { s.OAuth = l.oauth(p, v) },

		"enabled":                     func(p string, v any) { s.Enabled = l.boolPtr(p, v) },
		"required":                    func(p string, v any) { s.Required = l.bool(p, v) },
		"startup_timeout_sec":         func(p string, v any) { s.StartupTimeoutSec = l.seconds(p, v) },
		"startup_timeout_ms":          func(p string, v any) { startupMs = l.millis(p, v) },
		"tool_timeout_sec":            func(p string, v any) { s.ToolTimeoutSec = l.seconds(p, v) },
		"enabled_tools":               func(p string, v any) { s.EnabledTools = l.strList(p, v) },
		"disabled_tools":              func(p string, v any) { s.DisabledTools = l.strList(p, v) },
		"default_tools_approval_mode": func(p string, v any) { s.DefaultToolsApprovalMode = l.mode(p, v) },
		"tools": func(p string, v any) {
			s.Tools = map[string]*ServerTool{}
			l.tableOfTables(p, v, func(p, name string, t map[string]any) { s.Tools[name] = l.serverTool(p, t) })
		},
		"supports_parallel_tool_calls": func(p string, v any) { s.SupportsParallelToolCalls = l.bool(p, v) },
		"omit_tools_from":              func(p string, v any) { s.OmitToolsFrom = l.strList(p, v) },
		"environment_id":               func(p string, v any) { s.EnvironmentID = l.str(p, v) },
		"experimental_environment":     func(p string, v any) { s.EnvironmentID = l.str(p, v) },
		"name":                         func(p string, v any) { l.str(p, v) }, // legacy, ignored by Codex too

		"trust":      func(p string, v any) { s.Trust = l.trust(p, v) },
		"connectors": func(p string, v any) { s.Connectors = l.bool(p, v) },
		"client_capabilities": func(p string, v any) {
			s.ClientCapabilities = l.enumList(p, v, "client capability", ClientCapabilityNames...)
		},
		"approval_channel": func(p string, v any) { s.ApprovalChannel = l.approvalChannel(p, v) },
	})
	// Codex: startup_timeout_sec wins over the legacy startup_timeout_ms.
	if s.StartupTimeoutSec == nil {
		s.StartupTimeoutSec = startupMs
	}
	l.transport(p, s, t)
	return s
}

// transport mirrors Codex's TryFrom<RawMcpServerConfig>: command selects
// stdio and url streamable HTTP; a key of the other transport is an error.
func (l *loader) transport(p string, s *Server, t map[string]any) {
	_, hasCommand := t["command"]
	_, hasURL := t["url"]
	var foreign []string
	var kind, fix string
	switch {
	case hasCommand:
		kind, fix = "stdio", "remove it, or remove command to connect over streamable HTTP"
		// Codex's list (mcp_types.rs, TryFrom<RawMcpServerConfig>): OAuth and
		// auth settings are HTTP-only, so Codex refuses them on stdio too.
		foreign = []string{"url", "bearer_token_env_var", "http_headers", "env_http_headers", "http_headers_helper", "oauth", "oauth_resource", "auth"}
	case hasURL:
		kind, fix = "streamable HTTP", "remove it, or remove url to start the server over stdio"
		foreign = []string{"args", "env", "env_vars", "cwd"}
	default:
		// Where the server was introduced: the layer that should have set it.
		l.diags = append(l.diags, Diagnostic{Pos: s.Pos, Path: p,
			Message: "invalid transport: set command (stdio) or url (streamable HTTP)"})
		return
	}
	for _, k := range foreign {
		if _, ok := t[k]; ok {
			kp := joinKey(p, k)
			l.errorAt(kp, p, "`%s` is not supported for %s servers: %s", k, kind, fix)
		}
	}
}

// millis reads the legacy startup_timeout_ms (a u64) as seconds.
func (l *loader) millis(p string, v any) *float64 {
	n, ok := v.(int64)
	if !ok || n < 0 {
		l.errorf(p, "expected a non-negative integer (milliseconds), got %s", describe(v))
		return nil
	}
	f := float64(n) / 1000
	return &f
}

// envVars reads env_vars: each entry "NAME" or { name = "NAME", source =
// "local" | "remote" }.
func (l *loader) envVars(p string, v any) []EnvVar {
	arr, ok := asArray(v)
	if !ok {
		l.errorf(p, "expected an array of variable names, got %s", describe(v))
		return nil
	}
	out := make([]EnvVar, 0, len(arr))
	for i, e := range arr {
		ep := joinIndex(p, i)
		switch x := e.(type) {
		case string:
			out = append(out, EnvVar{Name: x})
		case map[string]any:
			var ev EnvVar
			l.table(ep, x, fields{
				"name":   func(p string, v any) { ev.Name = l.str(p, v) },
				"source": func(p string, v any) { ev.Source = l.enum(p, v, "source", "local", "remote") },
			})
			if _, ok := x["name"]; !ok {
				l.errorf(ep, `missing required key "name"`)
			}
			out = append(out, ev)
		default:
			l.errorf(ep, `expected a variable name or { name = "...", source = "local" }, got %s`, describe(e))
		}
	}
	return out
}

func (l *loader) oauth(p string, v any) *OAuth {
	o := &OAuth{}
	if _, ok := l.table(p, v, fields{
		"client_id":     func(p string, v any) { o.ClientID = l.str(p, v) },
		"callback_url":  func(p string, v any) { o.CallbackURL = l.str(p, v) },
		"callback_port": func(p string, v any) { o.CallbackPort = l.positiveInt(p, v, math.MaxUint16, "a TCP port") },
	}); !ok {
		return nil
	}
	return o
}

func (l *loader) serverTool(p string, t map[string]any) *ServerTool {
	st := &ServerTool{}
	st.Pos, _ = l.firstPos(p)
	l.table(p, t, fields{
		"approval_mode":      func(p string, v any) { st.ApprovalMode = l.mode(p, v) },
		"output_token_limit": func(p string, v any) { st.OutputTokenLimit = l.positiveInt(p, v, math.MaxInt32, "tokens") },
	})
	return st
}

// policies reads [policies.<name>], ordered by where each was first
// defined: earlier layer first, then earlier in the file. Plugins run in
// this order, so it must not depend on map iteration.
func (l *loader) policies(v any) []*Policy {
	type placed struct {
		p     *Policy
		layer int
	}
	var all []placed
	l.tableOfTables("policies", v, func(p, name string, t map[string]any) {
		pol := l.policy(p, name, t)
		_, layer := l.firstPos(p)
		all = append(all, placed{pol, layer})
	})
	slices.SortStableFunc(all, func(a, b placed) int {
		switch {
		case a.layer != b.layer:
			return a.layer - b.layer
		case a.p.Pos.Line != b.p.Pos.Line:
			return a.p.Pos.Line - b.p.Pos.Line
		}
		return a.p.Pos.Col - b.p.Pos.Col
	})
	out := make([]*Policy, len(all))
	for i, a := range all {
		out[i] = a.p
	}
	return out
}

// builtinName is what a builtin plugin may be called; which names exist is
// the plugin host's to say, when it loads them.
// isBuiltinName matches ^[a-z][a-z0-9_-]*$.
func isBuiltinName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

var onErrorVerdicts = []string{"deny", "ask", "abstain"}

func (l *loader) policy(p, name string, t map[string]any) *Policy {
	pol := &Policy{Name: name}
	pol.Pos, _ = l.firstPos(p)
	l.table(p, t, fields{
		"wasm":    func(p string, v any) { pol.Wasm = l.wasmPath(p, v) },
		"builtin": func(p string, v any) { pol.Builtin = l.builtin(p, v) },
		"apps":    func(p string, v any) { pol.Apps = l.globs(p, v) },
		"tools":   func(p string, v any) { pol.Tools = l.globs(p, v) },
		"config": func(p string, v any) {
			if c, ok := l.asTable(p, v); ok {
				pol.Config = c
			}
		},
		"timeout_ms": func(p string, v any) { pol.TimeoutMs = l.positiveInt(p, v, math.MaxInt32, "milliseconds") },
		"memory_limit_mb": func(p string, v any) {
			pol.MemoryLimitMB = l.positiveInt(p, v, 4096, "MiB; wasm32 memory tops out at 4096")
		},
		"max_output_kb": func(p string, v any) { pol.MaxOutputKB = l.positiveInt(p, v, math.MaxInt32/1024, "KiB") },
		"result_limit_kb": func(p string, v any) {
			pol.ResultLimitKB = l.positiveInt(p, v, MaxResultLimitKB, "KiB of a tool result the plugin sees in observe; an event's input is at most 1 MiB")
		},
		"on_error":    func(p string, v any) { pol.OnError = l.enum(p, v, "on_error verdict", onErrorVerdicts...) },
		"can_approve": func(p string, v any) { pol.CanApprove = l.bool(p, v) },
		"enabled":     func(p string, v any) { pol.Enabled = l.boolPtr(p, v) },
		"data":        func(p string, v any) { pol.Data, pol.DataPos = l.dataPath(p, v) },
	})
	_, hasWasm := t["wasm"]
	_, hasBuiltin := t["builtin"]
	switch {
	case hasWasm && hasBuiltin:
		l.errorf(p, "both wasm and builtin are set: a policy runs one plugin, so keep one (or split it into two policies)")
	case !hasWasm && !hasBuiltin:
		l.errorf(p, `no plugin: set wasm = "path/to/plugin.wasm" or builtin = "<name>"`)
	}
	if pol.OnError == "" {
		pol.OnError = "deny"
	}
	return pol
}

// wasmPath resolves a plugin path against the folder of the layer that
// wrote it, so a config means the same from any working directory.
func (l *loader) wasmPath(p string, v any) string {
	s := l.str(p, v)
	if s == "" {
		if _, ok := v.(string); ok {
			l.errorf(p, "empty path: set the .wasm file to load")
		}
		return ""
	}
	if abs, ok := l.layerPath(p, s); ok {
		return abs
	}
	return s
}

// layerPath resolves path s, written at key p, against the folder of the
// layer that wrote it, so a config means the same from any working
// directory. It reports an error at p when s cannot be made absolute.
func (l *loader) layerPath(p, s string) (string, bool) {
	if !filepath.IsAbs(s) {
		dir := "."
		if ly := l.lastLayer(p); ly != nil {
			dir = ly.dir()
		}
		s = filepath.Join(dir, s)
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		l.errorf(p, "cannot resolve %s: %v", quote(s), err)
		return "", false
	}
	return abs, true
}

func (l *loader) builtin(p string, v any) string {
	s := l.str(p, v)
	if _, ok := v.(string); ok && !isBuiltinName(s) {
		l.errorf(p, "invalid builtin plugin name %s: use the plugin's name, lower case, e.g. \"trifecta\"", quote(s))
		return ""
	}
	return s
}

// globs reads an array of path.Match patterns, rejecting malformed ones now
// rather than when the first call fails to match.
func (l *loader) globs(p string, v any) []string {
	gs := l.strList(p, v)
	arr, _ := asArray(v)
	for i, e := range arr {
		if g, ok := e.(string); ok {
			if _, err := path.Match(g, ""); err != nil {
				l.errorf(joinIndex(p, i), "invalid glob %s: %v (use *, ? and [a-z] as in shell patterns)", quote(g), err)
			}
		}
	}
	return gs
}
