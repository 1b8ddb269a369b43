package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// Server is one MCP server an agent's (or toolwarden's) config names, as
// `toolwarden tools sync` starts it to list its tools.
type Server struct {
	Name string
	// Source is where it is configured: "FILE (mcpServers.NAME)".
	Source string
	Spec   serverspec.Spec
	// Err says why it cannot be listed (an unsupported transport, a
	// missing variable); Spec is then incomplete.
	Err error
	// Untrusted, when set, says why a server of the project's own config
	// (which came with the repository) must not be started: the agent has
	// not been told to trust it.
	Untrusted string
	// Agent is the agent that runs it (RunningServers); "" for a server
	// of toolwarden's own config.
	Agent Agent
}

// Places says where an agent's config files are, and the environment the
// servers the agent starts get.
type Places struct {
	Home    string // the user's home directory
	Project string // the project directory (where the agent runs)
	Getenv  func(string) string
	// Environ is the environment a stdio server started by the agent
	// inherits (os.Environ()), before the entry's own env.
	Environ []string
	// TrustProject counts the project as trusted by every agent (tools
	// sync --trust-project): its own servers resolve as if the user had
	// approved them. A hook never sets it.
	TrustProject bool
	// startsServers is set by RunningServers: a server the answer is
	// about will be started, so a project server is taken as run only
	// when the agent surely runs it.
	startsServers bool
}

// AgentServers lists the MCP servers agent's user and project config
// files name, every definition of every name, whether or not the agent
// runs it (which servers it runs is RunningServers', which tools sync
// starts; which one it runs for a name is Resolve's): Claude Code's ~/.claude.json
// (mcpServers, then projects[Project].mcpServers) and .mcp.json; Gemini
// CLI's ~/.gemini/settings.json and .gemini/settings.json; Codex's
// $CODEX_HOME/config.toml (default ~/.codex). A missing file holds no
// servers; a file that cannot be read is an error. Servers of the
// project's own files that the agent was not told to trust are marked
// Untrusted (see projecttrust.go).
func (p Places) AgentServers(agent Agent) ([]Server, []error) {
	switch agent {
	case Claude:
		var out []Server
		var errs []error
		files := p.ConfigFiles(Claude)
		user := files[0]
		s, err := p.claudeUser(user)
		out, errs = appendServers(out, errs, s, err)
		s, err = p.jsonServers(files[1], "mcpServers", claudeEntry)
		top, _ := readClaudeUser(user)
		s = markUntrusted(s, func(name string) bool { return p.claudeMCPJSONState(top.Projects[p.Project], name) == approved },
			"a server of the project's .mcp.json that Claude Code has not been told to trust (approve it in Claude Code, or pass --trust-project)")
		out, errs = appendServers(out, errs, s, err)
		return out, errs
	case Gemini:
		var out []Server
		var errs []error
		files := p.ConfigFiles(Gemini)
		s, err := p.jsonServers(files[0], "mcpServers", geminiEntry)
		out, errs = appendServers(out, errs, s, err)
		s, err = p.jsonServers(files[1], "mcpServers", geminiEntry)
		trusted := p.geminiTrusted()
		s = markUntrusted(s, func(string) bool { return trusted },
			"a server of the project's .gemini/settings.json, a folder not trusted in Gemini CLI (~/.gemini/trustedFolders.json; trust it there, or pass --trust-project)")
		out, errs = appendServers(out, errs, s, err)
		return out, errs
	case Codex:
		path := p.ConfigFiles(Codex)[0]
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		s, err := p.TOMLServers(path)
		if err != nil {
			return nil, []error{err}
		}
		return s, nil
	}
	return nil, []error{fmt.Errorf("unknown agent %q", agent)}
}

// ConfigFiles are the files agent reads its MCP servers from, from the
// least to the most specific, as AgentServers reads them (and `toolwarden
// init` rewrites them): Claude Code's .claude.json (in CLAUDE_CONFIG_DIR,
// default the home folder) and the project's .mcp.json; Gemini CLI's
// ~/.gemini/settings.json and the project's .gemini/settings.json; Codex's
// config.toml (in CODEX_HOME, default ~/.codex). None for an unknown agent.
func (p Places) ConfigFiles(agent Agent) []string {
	switch agent {
	case Claude:
		dir := p.Home
		if d := p.getenv("CLAUDE_CONFIG_DIR"); d != "" {
			dir = d
		}
		return []string{filepath.Join(dir, ".claude.json"), filepath.Join(p.Project, ".mcp.json")}
	case Gemini:
		return []string{filepath.Join(p.Home, ".gemini", "settings.json"), filepath.Join(p.Project, ".gemini", "settings.json")}
	case Codex:
		dir := filepath.Join(p.Home, ".codex")
		if d := p.getenv("CODEX_HOME"); d != "" {
			dir = d
		}
		return []string{filepath.Join(dir, "config.toml")}
	}
	return nil
}

func appendServers(out []Server, errs []error, s []Server, err error) ([]Server, []error) {
	if err != nil {
		return out, append(errs, err)
	}
	return append(out, s...), errs
}

func (p Places) getenv(k string) string {
	if p.Getenv == nil {
		return ""
	}
	return p.Getenv(k)
}

// TOMLServers lists the enabled [mcp_servers.*] of a Codex or toolwarden
// config file, each set up as Codex starts it.
func (p Places) TOMLServers(path string) ([]Server, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(cfg.Servers))
	for n := range cfg.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Server
	for _, n := range names {
		s := cfg.Servers[n]
		if !config.Bool(s.Enabled, true) {
			continue
		}
		sp, err := serverspec.FromConfig(s, p.getenv)
		out = append(out, Server{Name: n, Source: fmt.Sprintf("%s (mcp_servers.%s)", path, n), Spec: sp, Err: err})
	}
	return out, nil
}

// claudeUser reads ~/.claude.json: its user-scope mcpServers, then the
// local-scope ones of the project (projects[<project dir>].mcpServers).
func (p Places) claudeUser(path string) ([]Server, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var top struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
		Projects   map[string]struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		} `json:"projects"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := p.entries(path, "mcpServers", top.MCPServers, claudeEntry)
	if proj, ok := top.Projects[p.Project]; ok {
		out = append(out, p.entries(path, fmt.Sprintf("projects[%q].mcpServers", p.Project), proj.MCPServers, claudeEntry)...)
	}
	return out, nil
}

// entryFunc turns one server entry of a JSON config into a spec.
type entryFunc func(p Places, name string, raw json.RawMessage) (serverspec.Spec, error)

// jsonServers reads the member key (mcpServers) of a JSON settings file.
// Gemini CLI allows comments in settings.json; so does this.
func (p Places) jsonServers(path, key string, entry entryFunc) ([]Server, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(stripComments(data), &top); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var servers map[string]json.RawMessage
	if raw, ok := top[key]; ok {
		if err := json.Unmarshal(raw, &servers); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, key, err)
		}
	}
	return p.entries(path, key, servers, entry), nil
}

func (p Places) entries(path, key string, servers map[string]json.RawMessage, entry entryFunc) []Server {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Server, 0, len(names))
	for _, n := range names {
		sp, err := entry(p, n, servers[n])
		if err != nil {
			err = fmt.Errorf("%s: %s.%s: %w", path, key, n, err)
		}
		out = append(out, Server{Name: n, Source: fmt.Sprintf("%s (%s.%s)", path, key, n), Spec: sp, Err: err})
	}
	return out
}

// claudeEntry reads a Claude Code server: {"type": "stdio"|"http"|"sse",
// "command", "args", "env", "url", "headers"}, with ${VAR} and
// ${VAR:-default} expanded as Claude Code does.
func claudeEntry(p Places, name string, raw json.RawMessage) (serverspec.Spec, error) {
	var e struct {
		Type    string            `json:"type"`
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return serverspec.Spec{Name: name}, err
	}
	x := p.expander()
	switch {
	case e.Type == "sse":
		return serverspec.Spec{Name: name, URL: x(e.URL)}, errors.New(`"type": "sse" is not supported by tools sync (streamable HTTP and stdio are)`)
	case e.Type == "http" || e.Type == "streamable-http" || (e.Command == "" && e.URL != ""):
		return serverspec.Spec{Name: name, URL: x(e.URL), Headers: expandMap(x, e.Headers)}, nil
	case e.Command == "":
		return serverspec.Spec{Name: name}, errors.New(`no "command" and no "url"`)
	}
	return p.stdio(name, x(e.Command), expandAll(x, e.Args), expandMap(x, e.Env), ""), nil
}

// geminiEntry reads a Gemini CLI server: {"command", "args", "env", "cwd",
// "httpUrl" (streamable HTTP), "url" (SSE), "headers", "timeout" (ms)},
// with $VAR and ${VAR} expanded as Gemini CLI does.
func geminiEntry(p Places, name string, raw json.RawMessage) (serverspec.Spec, error) {
	var e struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
		Cwd     string            `json:"cwd"`
		URL     string            `json:"url"`
		HTTPURL string            `json:"httpUrl"`
		Headers map[string]string `json:"headers"`
		Timeout float64           `json:"timeout"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return serverspec.Spec{Name: name}, err
	}
	// Gemini CLI expands variables in every string of its settings.
	x := p.expander()
	e.Command, e.Cwd, e.URL, e.HTTPURL = x(e.Command), x(e.Cwd), x(e.URL), x(e.HTTPURL)
	e.Args = expandAll(x, e.Args)
	switch {
	case e.HTTPURL != "":
		return serverspec.Spec{Name: name, URL: e.HTTPURL, Headers: expandMap(x, e.Headers)}, nil
	case e.Command == "" && e.URL != "":
		return serverspec.Spec{Name: name, URL: e.URL}, errors.New(`"url" is an SSE server, which tools sync does not support (streamable HTTP via "httpUrl" and stdio are)`)
	case e.Command == "":
		return serverspec.Spec{Name: name}, errors.New(`no "command", "httpUrl" or "url"`)
	}
	cwd := e.Cwd
	if cwd != "" && !filepath.IsAbs(cwd) {
		cwd = filepath.Join(p.Project, cwd)
	}
	return p.stdio(name, e.Command, e.Args, expandMap(x, e.Env), cwd), nil
}

// stdio is a stdio server as an agent starts it: in the project folder
// (unless cwd says otherwise), with the agent's environment plus env.
func (p Places) stdio(name, command string, args []string, env map[string]string, cwd string) serverspec.Spec {
	if cwd == "" {
		cwd = p.Project
	}
	sp := serverspec.Spec{Name: name, Command: command, Args: args, Dir: cwd}
	if len(env) > 0 {
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			sp.Env = append(sp.Env, k+"="+env[k])
		}
	}
	return Inherit(sp, p.Environ)
}

// Inherit is sp started with environ (the agent's environment, which a
// stdio server inherits) under the entry's own variables, which win. An
// HTTP server, or a nil environ, is sp itself. A server found without the
// agent's environment (as the allow-lists judge it: only what the entry
// sets) is the same server as one found with it, once inherited.
func Inherit(sp serverspec.Spec, environ []string) serverspec.Spec {
	if sp.URL != "" || environ == nil {
		return sp
	}
	own := make(map[string]bool, len(sp.Env))
	for _, kv := range sp.Env {
		k, _, _ := strings.Cut(kv, "=")
		own[k] = true
	}
	merged := make([]string, 0, len(environ)+len(sp.Env))
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !own[k] {
			merged = append(merged, kv)
		}
	}
	sp.Env = append(merged, sp.Env...)
	return sp
}

// expander expands $VAR, ${VAR} and ${VAR:-default} through Getenv.
func (p Places) expander() func(string) string {
	return func(s string) string {
		return os.Expand(s, func(k string) string {
			if name, def, ok := strings.Cut(k, ":-"); ok {
				if v := p.getenv(name); v != "" {
					return v
				}
				return def
			}
			return p.getenv(k)
		})
	}
}

func expandAll(x func(string) string, in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = x(s)
	}
	return out
}

func expandMap(x func(string) string, in map[string]string) map[string]string {
	if in == nil {
		return nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = x(v)
	}
	return out
}

// stripComments blanks // and /* */ comments outside JSON strings, keeping
// every offset (so JSON errors still point at the right byte).
func stripComments(data []byte) []byte {
	if !bytes.Contains(data, []byte("/")) {
		return data
	}
	out := append([]byte(nil), data...)
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			j := bytes.Index(out[i+2:], []byte("*/"))
			end := len(out)
			if j >= 0 {
				end = i + 2 + j + 2
			}
			for ; i < end; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			i--
		}
	}
	return out
}
