package argguard

import (
	"path"
	"strings"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/pathglob"
	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// What an ask_glob rule proposes to remember an approval for (the rule's
// "remember" key). An approval scoped to the rule's own glob would
// approve exactly what the rule exists to ask about, so the scope is
// narrower: the directory of the path that was asked about (the default),
// or that path alone.
const (
	rememberDir   = "dir"   // "<directory of the resolved path>/**"
	rememberExact = "exact" // the resolved path, its glob characters escaped
	rememberNone  = "none"  // nothing: every call is asked
)

func checkRemember(at string, r *rule) error {
	switch {
	case r.remember == "" && r.kind == "ask_glob":
		r.remember = rememberDir
	case r.remember == "":
		r.remember = rememberNone
	case r.kind != "ask_glob":
		return pdk.ConfigError(at+".remember", "only an ask_glob rule proposes a scope for remembering")
	case r.remember != rememberDir && r.remember != rememberExact && r.remember != rememberNone:
		return pdk.ConfigError(at+".remember", `want "dir", "exact" or "none"`)
	}
	return nil
}

// Host limits on a proposed scope (pdk/ABI.md 5.2).
const maxScope = 256

// proposeScope returns the scope an ask of rule best proposes: only for an
// ask_glob rule that remembers, on a string argument the verdict names,
// whose path resolved, when no other ask rule matches the call too (the
// verdict names one rule's argument, so a scope must not also answer for
// another rule the human was not shown).
func proposeScope(rules []rule, best *rule, h hit, tool, app string, args pdk.Value, ctx *lazyContext) (pdk.Scope, bool) {
	if best.decision != pdk.Ask || best.remember == rememberNone || best.flagged == nil || h.why != "" {
		return pdk.Scope{}, false
	}
	v := argValue(best, args)
	s, isStr := v.Str()
	if !isStr {
		return pdk.Scope{}, false
	}
	p := h.resolved
	if p == "" {
		p = s
	}
	if !strings.HasPrefix(p, "/") {
		return pdk.Scope{}, false
	}
	p = path.Clean(p)
	glob := pathglob.Escape(p)
	if best.remember == rememberDir && path.Dir(p) != "/" {
		glob = pathglob.Escape(path.Dir(p)) + "/**"
	}
	arg := best.arg
	if !best.pointer {
		arg = "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(arg)
	}
	if len(glob) > maxScope || len(arg) > maxScope || !printable(glob) || !utf8.ValidString(arg) {
		return pdk.Scope{}, false
	}
	for i := best.index + 1; i < len(rules); i++ {
		r := &rules[i]
		if r.decision != pdk.Ask || !nameMatch(r.tool, tool) || !nameMatch(r.app, app) {
			continue
		}
		if v := argValue(r, args); v.Exists() {
			if _, ok := r.matches(v, ctx); ok {
				return pdk.Scope{}, false
			}
		}
	}
	return pdk.GlobScope(arg, glob), true
}

func argValue(r *rule, args pdk.Value) pdk.Value {
	if r.pointer {
		return args.Pointer(r.arg)
	}
	return args.Get(r.arg)
}

// printable: valid UTF-8 without control characters, as the host wants a
// scope's pattern.
func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}
