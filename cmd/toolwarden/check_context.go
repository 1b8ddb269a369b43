package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/pathglob"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// check and explain decide a call as the running proxy would: its paths
// are resolved against the server's working directory and home as the
// proxy would start the server (serverspec.Spec.ServerContext), which for
// a command the user runs is the user's own. Without that, "~" and
// relative paths could not be resolved and every path rule on them would
// fail closed, so explain would show denies the proxy never gives.

// pathFlag is --cwd or --home. set tells a given "" (unknown: try how a
// server whose directory is not known is judged) from no flag at all.
type pathFlag struct {
	value string
	set   bool
}

func (p *pathFlag) String() string { return p.value }

// Set takes a directory, made absolute against the working directory,
// or "" for unknown.
func (p *pathFlag) Set(v string) error {
	if v != "" {
		abs, err := filepath.Abs(v)
		if err != nil {
			return err
		}
		v = abs
	}
	p.value, p.set = v, true
	return nil
}

// callContext is what call's paths resolve against, and where it came
// from, for explain. Each field the call file's server_context gives
// wins; then --cwd and --home; the rest is derived as the proxy derives
// it for the server the call names ([mcp_servers.<server>] of the config
// when it has one, else a server started in this directory).
func (o *checkOptions) callContext(e *env, cfg *config.Config, server string, given *host.ServerContext) (*host.ServerContext, string) {
	spec := serverspec.Spec{Name: server, Command: server}
	from := "yours, as for a server you start here"
	if s, ok := cfg.Servers[server]; ok {
		if sp, err := serverspec.FromConfig(s, e.getenv); err == nil {
			spec = sp
			from = "as the proxy starts [mcp_servers." + tomlKey(server) + "]"
		}
	}
	x := spec.ServerContext(workingDir())
	var over []string
	if o.cwd.set {
		x.Cwd = o.cwd.value
		over = append(over, "--cwd")
	}
	if o.home.set {
		x.Home = o.home.value
		over = append(over, "--home")
	}
	if given != nil {
		over = append(over, `the call's "server_context"`)
		if given.Cwd != "" {
			x.Cwd = given.Cwd
		}
		if given.Home != "" {
			x.Home = given.Home
		}
		if given.Roots != nil {
			x.Roots = given.Roots
		}
		if given.ArgDirs != nil {
			x.ArgDirs = given.ArgDirs
		}
	}
	if len(over) > 0 {
		from += ", then " + strings.Join(over, " and ")
	}
	return x, from
}

// describeContext is the context as explain prints it.
func describeContext(x *host.ServerContext) string {
	show := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	s := "cwd=" + show(x.Cwd) + " home=" + show(x.Home)
	if len(x.Roots) > 0 {
		s += " roots=" + strings.Join(x.Roots, ",")
	}
	if len(x.ArgDirs) > 0 {
		s += " arg_dirs=" + strings.Join(x.ArgDirs, ",")
	}
	return s
}

// unresolvedSteps are trace steps for the arguments the deciding plugins
// flagged whose paths cannot be resolved against x: a deny or ask path
// rule matches such a value whatever file it names (it fails closed), so
// the decision may not be about the file the user had in mind. Each step
// says which value and why.
func unresolvedSteps(args json.RawMessage, flagged []string, x *host.ServerContext) []policy.Step {
	var doc any
	if len(flagged) == 0 || json.Unmarshal(args, &doc) != nil {
		return nil
	}
	ctx := pathglob.Context{Cwd: x.Cwd, Home: x.Home, Bases: append(append([]string(nil), x.Roots...), x.ArgDirs...)}
	var out []policy.Step
	for _, ptr := range flagged {
		for _, s := range stringsAt(doc, ptr) {
			why := ctx.Resolve(s, func(string) bool { return true })
			if why == "" {
				continue
			}
			out = append(out, policy.Step{
				Step: "path", Outcome: "unresolved", Source: ptr,
				Detail: fmt.Sprintf("%s cannot be resolved: %s%s; a deny or ask path rule matches what it cannot resolve (fails closed)",
					strconv.Quote(clipString(s, 120)), why, fixFor(why)),
			})
		}
	}
	return out
}

// fixFor says how to give check and explain what was unknown.
func fixFor(why string) string {
	switch why {
	case pathglob.WhyHome:
		return ` (give it with --home, or "home" in the call's "server_context")`
	case pathglob.WhyCwd:
		return ` (give it with --cwd, or "cwd" in the call's "server_context")`
	}
	return ""
}

// stringsAt returns the string, or the strings of the array, at a JSON
// pointer ("/path") or top-level key ("path") of doc.
func stringsAt(doc any, ptr string) []string {
	v := doc
	if strings.HasPrefix(ptr, "/") {
		for _, tok := range strings.Split(ptr[1:], "/") {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
			switch c := v.(type) {
			case map[string]any:
				v = c[tok]
			case []any:
				i, err := strconv.Atoi(tok)
				if err != nil || i < 0 || i >= len(c) {
					return nil
				}
				v = c[i]
			default:
				return nil
			}
		}
	} else if m, ok := v.(map[string]any); ok {
		v = m[ptr]
	}
	switch c := v.(type) {
	case string:
		return []string{c}
	case []any:
		var out []string
		for _, e := range c {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// withSteps inserts steps before the trace's closing "decision" step.
func withSteps(trace, steps []policy.Step) []policy.Step {
	if len(steps) == 0 {
		return trace
	}
	at := len(trace)
	if at > 0 && trace[at-1].Step == "decision" {
		at--
	}
	out := append(append(append([]policy.Step(nil), trace[:at]...), steps...), trace[at:]...)
	return out
}

func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}
