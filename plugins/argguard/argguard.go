// Package argguard is the first-party plugin that checks tool-call
// arguments against rules from its config:
//
//	[policies.argguard]
//	builtin = "argguard"
//	config.rules = [
//	  { tool = "write_file", arg = "path", deny_glob = "/etc/**" },
//	  { tool = "*", arg = "command", ask_regex = "rm\\s+-rf" },
//	  { tool = "http_*", arg = "/options/url", deny_regex = "^http://" },
//	]
//
// Each rule has:
//   - tool: a glob over the tool name ('*' any run, '?' one character;
//     default "*"), and app: the same over the app (default "*");
//   - arg: a top-level argument name, or a JSON pointer ("/options/path",
//     "/paths/0") when it starts with '/';
//   - exactly one matcher: deny_glob, ask_glob, allow_glob, deny_regex,
//     ask_regex or allow_regex;
//   - optionally code and reason to override the verdict's.
//
// Globs match paths: '*' and '?' stay within one '/'-separated segment, '**'
// crosses segments, and a trailing "/**" also matches the directory itself.
// A glob judges the path the server will use: a deny or ask glob matches
// when the raw value, its cleaned form (path.Clean: "/tmp/../etc/passwd" is
// "/etc/passwd") or any path the server may resolve it to matches, or when
// it cannot be resolved (fail closed); an allow glob needs every form to
// match (resolve.go). A glob that is "~" or starts with "~/" names paths
// under the server's home. Regexes (RE2 syntax) match anywhere in the value
// unless anchored.
//
// Values: a string is matched as is; an array matches when any element does
// (deny/ask) or every element does (allow); numbers, booleans and objects
// are matched as their JSON text. A missing argument matches no rule.
//
// All rules are evaluated; the verdict is the strongest match (deny > ask >
// allow), from the first rule with that decision, and names the rule's
// argument in its "arguments". Asks are never rememberable as a whole: an
// approval would cover every later argument. An ask_glob ask proposes a
// scope instead (scope.go; the rule's "remember": "dir", "exact", "none").
//
// The module toolwarden ships (plugins/argguard.wasm) is built from the
// Rust source in rust/ (lib.rs; its regexps are compiled and matched by the
// host's Go regexp through the imports of pdk/ABI.md section 16); this Go
// package is the rule's reference implementation. A differential test in
// internal/plugin (TestArgguardModuleMatchesGoReference, with the fuzz tests
// FuzzArgguardGlobMatchesGo and FuzzArgguardPathsMatchGo) holds the module
// to this package's output, byte for byte, and the benchmarks use this
// package as the native twin. docs/RATIONALE.md ("First-party plugins are
// small modules") says why the module is not built from this package.
package argguard

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// Verdict codes.
const (
	CodeDeny  = "arg_denied"
	CodeAsk   = "arg_needs_approval"
	CodeAllow = "arg_allowed"
)

type rule struct {
	index    int
	tool     string
	app      string
	arg      string
	pointer  bool
	decision pdk.Decision
	kind     string // the matcher key, e.g. "deny_glob"
	pattern  string
	glob     *pathGlob
	home     bool // the glob is "~" or starts with "~/": paths under the server's home
	re       *regexp.Regexp
	code     string
	reason   string
	// remember is what an ask_glob rule proposes to remember an approval
	// for (scope.go): rememberDir, rememberExact or rememberNone.
	remember string
	// flagged names the argument in the verdict's "arguments" (nil when
	// the host could not read it as a name: see flaggable).
	flagged []string
}

// New returns the plugin with its own configuration state.
func New() *pdk.Plugin {
	var rules []rule
	return &pdk.Plugin{
		Name:    "argguard",
		Version: "1.0.0",
		Configure: func(cfg pdk.Value) error {
			var err error
			rules, err = parseRules(cfg)
			return err
		},
		Check: func(c *pdk.Check) pdk.Verdict { return Check(rules, c) },
	}
}

var matcherKeys = map[string]pdk.Decision{
	"deny_glob": pdk.Deny, "ask_glob": pdk.Ask, "allow_glob": pdk.Allow,
	"deny_regex": pdk.Deny, "ask_regex": pdk.Ask, "allow_regex": pdk.Allow,
}

func parseRules(cfg pdk.Value) ([]rule, error) {
	var rules []rule
	var err error
	cfg.Members(func(key string, v pdk.Value) bool {
		if key != "rules" {
			err = pdk.ConfigError(key, `unknown key (argguard knows only "rules")`)
			return false
		}
		if v.Kind() != pdk.Array {
			err = pdk.ConfigError("rules", "want an array of tables")
			return false
		}
		v.Each(func(i int, rv pdk.Value) bool {
			var r rule
			r, err = parseRule(i, rv)
			rules = append(rules, r)
			return err == nil
		})
		return err == nil
	})
	return rules, err
}

func parseRule(i int, v pdk.Value) (rule, error) {
	at := "rules[" + strconv.Itoa(i) + "]"
	r := rule{index: i, tool: "*", app: "*"}
	if v.Kind() != pdk.Object {
		return r, pdk.ConfigError(at, "want a table like {tool = \"write_file\", arg = \"path\", deny_glob = \"/etc/**\"}")
	}
	var err error
	str := func(key string, v pdk.Value) string {
		s, ok := v.Str()
		if !ok && err == nil {
			err = pdk.ConfigError(at+"."+key, "want a string")
		}
		return s
	}
	v.Members(func(key string, v pdk.Value) bool {
		switch key {
		case "tool":
			r.tool = str(key, v)
		case "app":
			r.app = str(key, v)
		case "arg":
			r.arg = str(key, v)
		case "code":
			r.code = str(key, v)
		case "reason":
			r.reason = str(key, v)
		case "remember":
			r.remember = str(key, v)
		default:
			d, ok := matcherKeys[key]
			if !ok {
				err = pdk.ConfigError(at+"."+key, "unknown key (want tool, app, arg, code, reason, remember, or one of deny_glob, ask_glob, allow_glob, deny_regex, ask_regex, allow_regex)")
				return false
			}
			if r.kind != "" {
				err = pdk.ConfigError(at, "has both "+r.kind+" and "+key+"; give each rule one matcher")
				return false
			}
			r.kind, r.decision, r.pattern = key, d, str(key, v)
		}
		return err == nil
	})
	if err != nil {
		return r, err
	}
	if r.arg == "" {
		return r, pdk.ConfigError(at, `missing "arg" (an argument name, or a JSON pointer such as "/options/path")`)
	}
	r.pointer = r.arg[0] == '/'
	if flaggable(r.arg) {
		r.flagged = []string{r.arg}
	}
	switch {
	case r.kind == "":
		return r, pdk.ConfigError(at, "missing a matcher (deny_glob, ask_glob, allow_glob, deny_regex, ask_regex or allow_regex)")
	case r.kind[len(r.kind)-4:] == "glob":
		r.glob = compilePathGlob(r.pattern)
		r.home = r.pattern == "~" || strings.HasPrefix(r.pattern, "~/")
	default:
		re, rerr := regexp.Compile(r.pattern)
		if rerr != nil {
			return r, pdk.ConfigError(at+"."+r.kind, rerr.Error())
		}
		r.re = re
	}
	if r.code != "" && !validCode(r.code) {
		return r, pdk.ConfigError(at+".code", "want [a-z0-9_.:-]{1,64}")
	}
	return r, checkRemember(at, &r)
}

// flaggable reports whether the host takes arg as the name of a flagged
// argument (pdk/ABI.md 5.2): at most 256 bytes and, for a JSON pointer,
// every '~' followed by '0' or '1'.
func flaggable(arg string) bool {
	if len(arg) > 256 {
		return false
	}
	for i := 0; arg[0] == '/' && i < len(arg); i++ {
		if arg[i] == '~' && (i+1 == len(arg) || arg[i+1] != '0' && arg[i+1] != '1') {
			return false
		}
	}
	return true
}

func validCode(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// Check evaluates the rules against one call.
func Check(rules []rule, c *pdk.Check) pdk.Verdict {
	var best *rule
	var bestHit hit
	if len(rules) == 0 {
		return pdk.NoOpinion()
	}
	call := c.Call()
	tool, app := call.ToolName(), call.App()
	args := call.Arguments()
	ctx := lazyContext{c: c} // read when a path first needs it
	for i := range rules {
		r := &rules[i]
		if best != nil && r.decision <= best.decision {
			continue // cannot beat what already matched
		}
		if !nameMatch(r.tool, tool) || !nameMatch(r.app, app) {
			continue
		}
		var v pdk.Value
		if r.pointer {
			v = args.Pointer(r.arg)
		} else {
			v = args.Get(r.arg)
		}
		if !v.Exists() {
			continue
		}
		if h, ok := r.matches(v, &ctx); ok {
			best, bestHit = r, h
		}
	}
	if best == nil {
		return pdk.NoOpinion()
	}
	code := best.code
	if code == "" {
		code = [...]string{pdk.Allow: CodeAllow, pdk.Ask: CodeAsk, pdk.Deny: CodeDeny}[best.decision]
	}
	reason := best.reason
	if reason == "" {
		reason = "argument " + pdk.Quote(best.arg) + " = " + pdk.Quote(clip(bestHit.val, 120))
		switch {
		case bestHit.why != "":
			reason += " (unresolved: " + bestHit.why + ")"
		case bestHit.resolved != "":
			reason += " (resolved: " + pdk.Quote(clip(bestHit.resolved, 120)) + ")"
		}
		reason += " matches " + best.kind + " " + pdk.Quote(best.pattern)
	}
	v := pdk.Verdict{Decision: best.decision, Code: code, Reason: reason, Arguments: best.flagged}
	if sc, ok := proposeScope(rules, best, bestHit, tool, app, args, &ctx); ok {
		v.Scopes = []pdk.Scope{sc}
	}
	return v
}

// hit is the value that matched a rule and how: through a path it
// resolves to (when that differs from the value), or failing closed on a
// path that cannot be resolved (why).
type hit struct {
	val, resolved, why string
}

// matches reports whether the value matches, and which value did: for an
// array, the first element that matches (deny, ask) or the last of all
// matching (allow).
func (r *rule) matches(v pdk.Value, ctx *lazyContext) (hit, bool) {
	if v.Kind() == pdk.Array {
		all := r.decision == pdk.Allow
		n := 0
		var last hit
		ok := all
		v.Each(func(_ int, e pdk.Value) bool {
			n++
			h, m := r.matchOne(e, ctx)
			if all && !m {
				ok = false
				return false
			}
			if !all && m {
				ok, last = true, h
				return false
			}
			last = h
			return true
		})
		return last, ok && n > 0
	}
	return r.matchOne(v, ctx)
}

// matchOne matches one value: a regexp anywhere in its text; a glob on
// the text, its cleaned form and, for a string, the paths the server may
// resolve it to (resolve.go).
func (r *rule) matchOne(v pdk.Value, ctx *lazyContext) (hit, bool) {
	s, isStr := v.Str()
	if !isStr {
		s = string(v.Raw())
	}
	h := hit{val: s}
	if r.re != nil {
		return h, r.re.MatchString(s)
	}
	abs := isStr && strings.HasPrefix(s, "/")
	if r.decision != pdk.Allow {
		m, unknown := r.pathMatch(s, ctx)
		if m {
			return h, true
		}
		if c := path.Clean(s); c != s && s != "" {
			m, u := r.pathMatch(c, ctx)
			if m {
				h.resolved = c
				return h, true
			}
			unknown = unknown || u
		}
		if isStr && !abs {
			h.why = ctx.get().resolve(s, func(f string) bool {
				m, u := r.pathMatch(f, ctx)
				if m {
					h.resolved = f
				}
				unknown = unknown || u
				return !m
			})
			if h.resolved != "" || h.why != "" {
				return h, true
			}
		}
		if unknown {
			h.why = whyHome
		}
		return h, unknown
	}
	// An allow needs every form the server may use to match.
	if !isStr || abs {
		if m, u := r.pathMatch(s, ctx); !m || u {
			return h, false
		}
		if c := path.Clean(s); c != s && s != "" {
			h.resolved = c
			m, u := r.pathMatch(c, ctx)
			return h, m && !u
		}
		return h, true
	}
	ok := true
	if why := ctx.get().resolve(s, func(f string) bool {
		if h.resolved == "" {
			h.resolved = f
		}
		m, u := r.pathMatch(f, ctx)
		ok = m && !u
		return ok
	}); why != "" {
		return h, false
	}
	return h, ok
}

// pathMatch matches one form of a path. A glob that starts with "~"
// names paths under the server's home: an absolute form under it is
// matched as "~/...", and one that cannot be related to an unknown home
// reports unknown.
func (r *rule) pathMatch(f string, ctx *lazyContext) (match, unknown bool) {
	if r.home && strings.HasPrefix(f, "/") {
		home := ctx.get().home
		switch {
		case home == "":
			return false, true
		case f == home:
			f = "~"
		case home == "/":
			f = "~" + f
		case strings.HasPrefix(f, home) && f[len(home)] == '/':
			f = "~" + f[len(home):]
		}
	}
	return r.glob.match(f), false
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
