package config

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ServerRequirement is one entry of a requirements file's [mcp_servers]
// table, Codex's server allow-list: a server of this name runs only when its
// transport matches. Either the legacy identity form
//
//	[mcp_servers.docs.identity]
//	command = "docs-mcp"          # or url = "https://…", compared exactly
//
// which compares the command alone (any arguments), or the matcher form
//
//	[mcp_servers.docs]
//	command = "docs-mcp"
//	args = [{ match = "exact", value = "serve" }, { match = "regex", expression = '/srv/[a-z]+' }]
//	# or: url = { match = "prefix", value = "https://mcp.example.com/" }
//
// in which every argument is matched in place and their count must agree.
// Either form refuses a stdio server whose env sets a variable that loads
// code (LoadsCode); the matcher form may name such variables, and the
// directory the server starts in:
//
//	env = { NODE_OPTIONS = { match = "exact", value = "--max-old-space-size=4096" } }
//	cwd = { match = "exact", value = "/srv/docs" }
type ServerRequirement struct {
	Name string
	// IdentityCommand, IdentityURL: the legacy form.
	IdentityCommand, IdentityURL string
	// Command and Args: the matcher form for stdio servers.
	Command string
	Args    []ValueMatcher
	// Env matches the variables it names, when the server sets them; Cwd
	// the server's directory (nil: any). Matcher form only.
	Env map[string]ValueMatcher
	Cwd *ValueMatcher
	// URL: the matcher form for HTTP servers (nil when absent).
	URL *ValueMatcher
	Pos Position
}

// ValueMatcher compares one string: exactly, by prefix, or with a regular
// expression that must match the whole value.
type ValueMatcher struct {
	Match string // exact, prefix or regex
	Value string // exact and prefix
	re    *regexp.Regexp
}

func (m ValueMatcher) matches(s string) bool {
	switch m.Match {
	case "exact":
		return s == m.Value
	case "prefix":
		return strings.HasPrefix(s, m.Value)
	case "regex":
		return m.re != nil && m.re.MatchString(s)
	}
	return false
}

func (m ValueMatcher) String() string {
	if m.Match == "regex" {
		return "regex " + quote(m.Value)
	}
	return m.Match + " " + quote(m.Value)
}

// matches reports whether s may run under this requirement. A stdio
// requirement never admits an HTTP server and the other way round.
func (r *ServerRequirement) matches(s *Server) bool {
	switch {
	case r.IdentityCommand != "":
		return s.URL == "" && s.Command == r.IdentityCommand
	case r.IdentityURL != "":
		return s.URL != "" && s.URL == r.IdentityURL
	case r.URL != nil:
		return s.URL != "" && r.URL.matches(s.URL)
	case r.Command != "":
		if s.URL != "" || s.Command != r.Command || len(s.Args) != len(r.Args) {
			return false
		}
		for i, m := range r.Args {
			if !m.matches(s.Args[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func (r *ServerRequirement) envCwd() envCwdRule { return envCwdRule{Env: r.Env, Cwd: r.Cwd} }

// allowedServer reports whether an [[allowed_servers]] entry admits the
// server; when entries admit its command but none its env or directory,
// why says what the first of them refused.
func (r *Requirements) allowedServer(s *Server) (ok bool, why string) {
	for _, a := range r.AllowedServers {
		if !a.matches(s) {
			continue
		}
		w := ""
		if s.URL == "" {
			w = envCwdRule{Env: a.Env, Cwd: a.Cwd}.refuses(s)
		}
		if w == "" {
			return true, ""
		}
		if why == "" {
			why = w
		}
	}
	return false, why
}

// describe says what the requirement admits, for override messages.
func (r *ServerRequirement) describe() string {
	switch {
	case r.IdentityCommand != "":
		return "command " + quote(r.IdentityCommand)
	case r.IdentityURL != "":
		return "url " + quote(r.IdentityURL)
	case r.URL != nil:
		return "url " + r.URL.String()
	}
	parts := make([]string, len(r.Args))
	for i, a := range r.Args {
		parts[i] = a.String()
	}
	return fmt.Sprintf("command %s with args [%s]", quote(r.Command), strings.Join(parts, ", "))
}

// serverRequirements reads a requirements file's [mcp_servers] table.
func (l *loader) serverRequirements(path string, v any) map[string]*ServerRequirement {
	out := map[string]*ServerRequirement{}
	l.tableOfTables(path, v, func(p, name string, t map[string]any) {
		r := &ServerRequirement{Name: name, Pos: l.pos(p)}
		out[name] = r
		if id, ok := t["identity"]; ok {
			for _, k := range []string{"command", "args", "url"} {
				if _, clash := t[k]; clash {
					l.errorf(p+"."+k, "identity cannot be combined with command, args or url: use [%s.identity] alone or the matcher keys alone", p)
					return
				}
			}
			it, ok := l.asTable(p+".identity", id)
			if !ok {
				return
			}
			c, hasC := it["command"]
			u, hasU := it["url"]
			if hasC == hasU {
				l.errorf(p+".identity", "needs exactly one of command or url")
				return
			}
			if hasC {
				// The legacy form names no directory, so a relative command
				// in it admits nothing (envCwdRule.refuses); Codex loads
				// such a file, and so do we.
				r.IdentityCommand = l.str(p+".identity.command", c)
			} else {
				r.IdentityURL = l.str(p+".identity.url", u)
			}
			// Codex ignores other keys beside identity; so do we.
			return
		}
		for _, k := range sortedKeys(t) {
			kp := p + "." + k
			switch k {
			case "command":
				r.Command = l.str(kp, t[k])
			case "args":
				arr, ok := asArray(t[k])
				if !ok {
					l.errorf(kp, "expected an array of matchers such as { match = \"exact\", value = \"serve\" }, got %s", describe(t[k]))
					continue
				}
				for i, e := range arr {
					if m, ok := l.valueMatcher(joinIndex(kp, i), e); ok {
						r.Args = append(r.Args, m)
					}
				}
			case "url":
				if m, ok := l.valueMatcher(kp, t[k]); ok {
					r.URL = &m
				}
			case "env", "cwd":
				// Read below, once the command is known.
			default:
				l.errorAt(kp, p, "unknown key %s in a server requirement (want identity, or command, args, env and cwd, or url)", quote(k))
			}
		}
		rule := l.envCwdRule(p, t, r.Command)
		r.Env, r.Cwd = rule.Env, rule.Cwd
		switch {
		case r.Command == "" && r.URL == nil:
			l.errorf(p, "a server requirement needs [%s.identity], command (with args) or url", p)
		case r.Command != "" && r.URL != nil:
			l.errorf(p, "a server requirement names either a command or a url, not both")
		case r.URL != nil && r.Args != nil:
			l.errorf(p+".args", "args apply to a command, not to a url")
		}
	})
	return out
}

// valueMatcher reads { match = "exact"|"prefix", value = "…" } or
// { match = "regex", expression = "…" }.
func (l *loader) valueMatcher(path string, v any) (ValueMatcher, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		l.errorf(path, "expected a matcher such as { match = \"exact\", value = \"…\" }, got %s", describe(v))
		return ValueMatcher{}, false
	}
	kind, _ := t["match"].(string)
	m := ValueMatcher{Match: kind}
	want := "value"
	switch kind {
	case "exact", "prefix":
	case "regex":
		want = "expression"
	default:
		l.errorf(path, "match must be \"exact\", \"prefix\" or \"regex\", got %s", describe(t["match"]))
		return m, false
	}
	for _, k := range sortedKeys(t) {
		if k != "match" && k != want {
			l.errorf(path, "unknown key %s in a %s matcher (want match and %s)", quote(k), kind, want)
			return m, false
		}
	}
	s, ok := t[want].(string)
	if !ok {
		l.errorf(path, "a %s matcher needs %s as a string", kind, want)
		return m, false
	}
	m.Value = s
	if kind == "regex" {
		if _, err := regexp.Compile(s); err != nil {
			l.errorf(path, "invalid regex %s: %v", quote(s), err)
			return m, false
		}
		// The expression must match the whole value, alternatives included.
		re, err := regexp.Compile(`\A(?:` + s + `)\z`)
		if err != nil {
			l.errorf(path, "regex %s cannot be used to match a whole value: %v", quote(s), err)
			return m, false
		}
		m.re = re
	}
	return m, true
}

// applyServerRequirements disables every configured server that a
// requirements file's allow-lists do not admit: its [[allowed_servers]]
// (by identity alone) and its [mcp_servers] (Codex's, by name and
// identity). No user layer can turn such a server back on. The file is
// kept so that servers that are not configured (the command wrap is given,
// an agent's own server list) are held to the same lists.
func (c *Config) applyServerRequirements(r *Requirements, overrideAt func(path string, at, req Position, msg string)) {
	if len(r.AllowedServers) == 0 && r.Servers == nil {
		return
	}
	c.serverLists = append(c.serverLists, r)
	for _, name := range sortedServerNames(c.Servers) {
		s := c.Servers[name]
		ok, req, msg := r.admits(name, s)
		if ok {
			continue
		}
		p := "mcp_servers." + quoteKey(name) + ".enabled"
		if Bool(s.Enabled, true) {
			overrideAt(p, s.Pos, req, msg+", so it is disabled")
		} else {
			c.required[p] = req
		}
		f := false
		s.Enabled = &f
	}
}

// admits reports whether the file's allow-lists let the server run, and
// if not, which entry decided and why.
func (r *Requirements) admits(name string, s *Server) (bool, Position, string) {
	id := s.Command
	if s.URL != "" {
		id = s.URL
	}
	if len(r.AllowedServers) > 0 {
		if ok, why := r.allowedServer(s); !ok {
			if why != "" {
				return false, r.at("allowed_servers"), fmt.Sprintf("server %s (%s) is in allowed_servers, but %s", quote(name), id, why)
			}
			return false, r.at("allowed_servers"), fmt.Sprintf("server %s (%s) is not in allowed_servers", quote(name), id)
		}
	}
	if r.Servers == nil {
		return true, Position{}, ""
	}
	sr := r.Servers[name]
	switch {
	case sr == nil:
		return false, r.at("mcp_servers"), fmt.Sprintf("server %s is not in the mcp_servers allow-list (%s)", quote(name), strings.Join(r.requiredServerNames(), ", "))
	case !sr.matches(s):
		return false, sr.Pos, fmt.Sprintf("server %s (%s) does not match the required %s", quote(name), id, sr.describe())
	}
	if why := sr.envCwd().refuses(s); s.URL == "" && why != "" {
		return false, sr.Pos, fmt.Sprintf("server %s (%s): %s", quote(name), id, why)
	}
	return true, Position{}, ""
}

// ServerAllowed reports whether the requirements in force let a server
// run under this name with this command and args (or URL), whether or not
// a layer configures it: wrap checks the command it is given, since a
// command line must not get round an admin's allow-list. When it is not
// allowed, the error says why and names the requirement that decided.
func (c *Config) ServerAllowed(name string, s *Server) error {
	_, err := c.refusal(name, s)
	return err
}

// refusal is the first allow-list entry that does not admit the server:
// where it is, and the error that says so; a nil error admits it.
func (c *Config) refusal(name string, s *Server) (Position, error) {
	for _, r := range c.serverLists {
		if ok, req, msg := r.admits(name, s); !ok {
			return req, fmt.Errorf("%s (required by %s)", msg, req)
		}
	}
	return Position{}, nil
}

// requiredServerNames lists the names an allow-list admits, for messages.
func (r *Requirements) requiredServerNames() []string {
	names := make([]string, 0, len(r.Servers))
	for n := range r.Servers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// HasServerAllowLists reports whether a requirements file in force limits
// which servers may run.
func (c *Config) HasServerAllowLists() bool { return len(c.serverLists) > 0 }

// ServerAllowListFiles names the requirements files whose server
// allow-lists are in force.
func (c *Config) ServerAllowListFiles() []string {
	out := make([]string, len(c.serverLists))
	for i, r := range c.serverLists {
		out[i] = r.File
	}
	return out
}

// RequirementsFiles names every requirements file applied, in order: a
// process that loads the same files is held to the same requirements.
func (c *Config) RequirementsFiles() []string { return slices.Clone(c.requirementsFiles) }

// AdmitServer holds a server that no layer may configure (an agent's own
// server, in hook mode) to the allow-lists. When they do not admit it, the
// server is recorded as disabled, required by the entry that decided, so
// that every decision on its tools denies and says so, like a configured
// server the lists disabled; the error says why.
func (c *Config) AdmitServer(name string, s *Server) error {
	req, err := c.refusal(name, s)
	if err == nil {
		return nil
	}
	srv := c.Servers[name]
	if srv == nil {
		cp := *s
		cp.Name, cp.Pos = name, req
		srv = &cp
		if c.Servers == nil {
			c.Servers = map[string]*Server{}
		}
		c.Servers[name] = srv
	}
	f := false
	srv.Enabled = &f
	c.required["mcp_servers."+quoteKey(name)+".enabled"] = req
	return err
}
