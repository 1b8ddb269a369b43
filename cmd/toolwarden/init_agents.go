package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/toolwarden/toolwarden/internal/hook"
)

// agentFile is one agent's MCP configuration file as init found it: the
// servers it lists and where each one's command and args are written.
type agentFile struct {
	agent   string // "Claude Code", "Codex", "Gemini CLI"
	path    string
	format  string // "json" or "toml"
	src     []byte
	mode    fs.FileMode
	servers []agentServer
	root    *jsonNode // json
	tspans  map[string]tomlSpan
}

// agentServer is one MCP server entry of an agent file.
type agentServer struct {
	name    string
	path    []string // keys from the document's root to the entry
	command string
	args    []string
	remote  bool // reached over HTTP: nothing for wrap to start
	wrapped bool // already goes through toolwarden wrap
	unknown string
}

// agentLocations are the files init reads, per agent: the ones
// `toolwarden tools sync` reads (hook.Places.ConfigFiles), so both find an
// agent's servers in the same places (CLAUDE_CONFIG_DIR and CODEX_HOME
// honoured as the agents honour them).
func agentLocations(p hook.Places) []struct{ agent, path, format string } {
	var out []struct{ agent, path, format string }
	for _, a := range []struct {
		id   hook.Agent
		name string
	}{{hook.Claude, "Claude Code"}, {hook.Codex, "Codex"}, {hook.Gemini, "Gemini CLI"}} {
		for _, path := range p.ConfigFiles(a.id) {
			format := "json"
			if filepath.Ext(path) == ".toml" {
				format = "toml"
			}
			out = append(out, struct{ agent, path, format string }{a.name, path, format})
		}
	}
	return out
}

// readAgentFile reads and parses one agent file. A missing file is (nil,
// nil); a malformed one is an error naming file:line:col, and is never
// rewritten.
func readAgentFile(agent, path, format string) (*agentFile, error) {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	f := &agentFile{agent: agent, path: path, format: format, src: src, mode: st.Mode().Perm()}
	if format == "toml" {
		return f, f.readTOML()
	}
	return f, f.readJSON()
}

func (f *agentFile) readJSON() error {
	if len(strings.TrimSpace(string(f.src))) == 0 {
		return nil // an empty file lists no servers
	}
	root, err := parseJSON(f.path, f.src, f.agent == "Gemini CLI")
	if err != nil {
		return err
	}
	if root.kind != '{' {
		return fmt.Errorf("%s:1:1: the file is not a JSON object (the file was not changed)", f.path)
	}
	f.root = root
	collect := func(servers *jsonNode, prefix []string) error {
		if servers == nil {
			return nil
		}
		if servers.kind != '{' {
			line, col := lineCol(f.src, servers.start)
			return fmt.Errorf("%s:%d:%d: %q is not an object of servers (the file was not changed)", f.path, line, col, strings.Join(prefix, "."))
		}
		for _, m := range servers.members {
			if servers.get(m.key) != m.val {
				continue // a repeated key: the agent reads the last one, and so do we
			}
			f.servers = append(f.servers, jsonServer(m.key, m.val, append(append([]string{}, prefix...), m.key)))
		}
		return nil
	}
	if err := collect(root.get("mcpServers"), []string{"mcpServers"}); err != nil {
		return err
	}
	// ~/.claude.json keeps per-project servers under projects.<folder>.
	if projects := root.get("projects"); projects != nil && projects.kind == '{' && strings.HasSuffix(f.path, ".claude.json") {
		for _, p := range projects.members {
			if projects.get(p.key) != p.val {
				continue
			}
			if err := collect(p.val.get("mcpServers"), []string{"projects", p.key, "mcpServers"}); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsonServer(name string, n *jsonNode, path []string) agentServer {
	s := agentServer{name: name, path: path}
	if n.kind != '{' {
		s.unknown = "not an object"
		return s
	}
	if t := n.get("type"); t != nil && t.kind == '"' && t.str != "stdio" {
		s.remote = true
	}
	if n.get("url") != nil || n.get("httpUrl") != nil {
		s.remote = true
	}
	cmd := n.get("command")
	if cmd == nil || cmd.kind != '"' {
		if !s.remote {
			s.unknown = "no \"command\" string"
		}
		return s
	}
	s.command = cmd.str
	if a := n.get("args"); a != nil {
		if a.kind != '[' {
			s.unknown = "\"args\" is not an array"
			return s
		}
		for _, e := range a.elems {
			if e.kind != '"' {
				s.unknown = "\"args\" holds a value that is not a string"
				return s
			}
			s.args = append(s.args, e.str)
		}
	}
	s.wrapped = isWrapped(s.command, s.args)
	return s
}

func (f *agentFile) readTOML() error {
	var doc map[string]any
	if _, err := toml.Decode(string(f.src), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s:%d:%d: %s (the file was not changed)", f.path, pe.Position.Line, pe.Position.Col, pe.Message)
		}
		return fmt.Errorf("%s: %w (the file was not changed)", f.path, err)
	}
	f.tspans = tomlSpans(string(f.src))
	servers, _ := doc["mcp_servers"].(map[string]any)
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	// Report servers in the file's order, as Codex lists them.
	sort.Slice(names, func(i, j int) bool {
		oi, oj := f.keyOffset(names[i]), f.keyOffset(names[j])
		return oi < oj || oi == oj && names[i] < names[j]
	})
	for _, name := range names {
		s := agentServer{name: name, path: []string{"mcp_servers", name}}
		entry, ok := servers[name].(map[string]any)
		if !ok {
			s.unknown = "not a table"
			f.servers = append(f.servers, s)
			continue
		}
		if _, ok := entry["url"]; ok {
			s.remote = true
		}
		cmd, ok := entry["command"].(string)
		if !ok {
			if !s.remote {
				s.unknown = "no command string"
			}
			f.servers = append(f.servers, s)
			continue
		}
		s.command = cmd
		if raw, ok := entry["args"]; ok {
			list, ok := raw.([]any)
			for _, a := range list {
				str, isStr := a.(string)
				if !isStr {
					ok = false
					break
				}
				s.args = append(s.args, str)
			}
			if !ok {
				s.unknown = "args is not an array of strings"
			}
		}
		s.wrapped = isWrapped(s.command, s.args)
		f.servers = append(f.servers, s)
	}
	return nil
}

// keyOffset orders TOML servers by where their command is written.
func (f *agentFile) keyOffset(name string) int {
	if sp, ok := f.tspans[joinPath(joinPath("mcp_servers", name), "command")]; ok {
		return sp.keyStart
	}
	return len(f.src)
}

// isWrapped tells an entry that already runs toolwarden wrap, so running
// init again changes nothing.
func isWrapped(command string, args []string) bool {
	base := strings.TrimSuffix(filepath.Base(command), ".exe")
	return base == "toolwarden" && len(args) > 0 && (args[0] == "wrap" || args[0] == "proxy")
}

// wrapArgs are the args of an entry rewritten to run through wrap with
// the config layers configs.
func wrapArgs(app string, configs []string, command string, args []string) []string {
	out := []string{"wrap", "--app", app}
	for _, c := range configs {
		out = append(out, "--config", c)
	}
	return append(append(out, "--", command), args...)
}

// wrapConfigs are the config layers the file's wrapped servers read:
// toolwarden's config, and for Codex its own config.toml after it, so that
// the [apps.*] and [mcp_servers.*] rules a Codex user keeps there go on
// counting (and win where both files set a key, as they do for Codex).
func (f *agentFile) wrapConfigs(configPath string) []string {
	if f.agent == "Codex" && f.format == "toml" && f.path != configPath {
		return []string{configPath, f.path}
	}
	return []string{configPath}
}

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

func applyEdits(src []byte, edits []edit) []byte {
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var out []byte
	last := 0
	for _, e := range edits {
		out = append(out, src[last:e.start]...)
		out = append(out, e.text...)
		last = e.end
	}
	return append(out, src[last:]...)
}

// rewrite returns the file with every wrappable server going through
// toolwarden wrap (twCommand) with configPath, and the names it changed. It
// re-reads its own output and refuses unless the only differences are
// those entries' command and args.
func (f *agentFile) rewrite(twCommand, configPath string) ([]byte, []string, error) {
	var edits []edit
	var changed []string
	for _, s := range f.servers {
		if s.remote || s.wrapped || s.unknown != "" || s.command == "" {
			continue
		}
		newArgs := wrapArgs(s.name, f.wrapConfigs(configPath), s.command, s.args)
		var es []edit
		var err error
		if f.format == "toml" {
			es, err = f.tomlEdits(s, twCommand, newArgs)
		} else {
			es, err = f.jsonEdits(s, twCommand, newArgs)
		}
		if err != nil {
			return nil, nil, err
		}
		edits = append(edits, es...)
		changed = append(changed, strings.Join(s.path, "."))
	}
	if len(edits) == 0 {
		return f.src, nil, nil
	}
	out := applyEdits(f.src, edits)
	if err := f.checkRewrite(out, twCommand, configPath); err != nil {
		return nil, nil, err
	}
	return out, changed, nil
}

func (f *agentFile) jsonEdits(s agentServer, twCommand string, newArgs []string) ([]edit, error) {
	n := f.root
	for _, k := range s.path {
		n = n.get(k)
	}
	cmd := n.get("command")
	es := []edit{{cmd.start, cmd.end, jsonString(twCommand)}}
	if a := n.get("args"); a != nil {
		multi := strings.Contains(string(f.src[a.start:a.end]), "\n")
		es = append(es, edit{a.start, a.end, jsonStringArray(newArgs, multi, indentAt(f.src, a.start))})
	} else if strings.Contains(string(f.src[n.start:cmd.start]), "\n") {
		ind := indentAt(f.src, cmd.start)
		es = append(es, edit{cmd.end, cmd.end, ",\n" + ind + `"args": ` + jsonStringArray(newArgs, true, ind)})
	} else {
		es = append(es, edit{cmd.end, cmd.end, `, "args": ` + jsonStringArray(newArgs, false, "")})
	}
	return es, nil
}

func (f *agentFile) tomlEdits(s agentServer, twCommand string, newArgs []string) ([]edit, error) {
	base := joinPath("mcp_servers", s.name)
	cmd, ok := f.tspans[joinPath(base, "command")]
	if !ok {
		return nil, fmt.Errorf("%s: mcp_servers.%s: cannot find where command is written; wrap it by hand", f.path, s.name)
	}
	es := []edit{{cmd.start, cmd.end, tomlString(twCommand)}}
	if a, ok := f.tspans[joinPath(base, "args")]; ok {
		multi := strings.Contains(string(f.src[a.start:a.end]), "\n")
		es = append(es, edit{a.start, a.end, tomlStringArray(newArgs, multi, indentAt(f.src, a.keyStart))})
		return es, nil
	}
	key := cmd.key[:len(cmd.key)-len(lastKeySegment(cmd.key))] + "args"
	if cmd.inline {
		return append(es, edit{cmd.end, cmd.end, ", " + key + " = " + tomlStringArray(newArgs, false, "")}), nil
	}
	eol := cmd.end
	for eol < len(f.src) && f.src[eol] != '\n' {
		eol++
	}
	if eol > cmd.end && f.src[eol-1] == '\r' {
		eol--
	}
	return append(es, edit{eol, eol, "\n" + indentAt(f.src, cmd.keyStart) + key + " = " + tomlStringArray(newArgs, false, "")}), nil
}

// lastKeySegment is the last segment of a dotted key as written.
func lastKeySegment(key string) string {
	for _, q := range []string{`"command"`, `'command'`} {
		if strings.HasSuffix(key, q) {
			return q
		}
	}
	return "command"
}

// checkRewrite parses the rewritten file and compares it with the original:
// everything but the rewritten entries' command and args must be equal.
func (f *agentFile) checkRewrite(out []byte, twCommand, configPath string) error {
	var before, after any
	if f.format == "toml" {
		var b, a map[string]any
		if _, err := toml.Decode(string(f.src), &b); err != nil {
			return err
		}
		if _, err := toml.Decode(string(out), &a); err != nil {
			return fmt.Errorf("%s: the rewritten file does not parse (%v); nothing was changed, please report this", f.path, err)
		}
		before, after = b, a
	} else {
		b, _ := parseJSON(f.path, f.src, true)
		a, err := parseJSON(f.path, out, true)
		if err != nil {
			return fmt.Errorf("the rewritten file does not parse (%v); nothing was changed, please report this", err)
		}
		before, after = b.value(f.src), a.value(out)
	}
	for _, s := range f.servers {
		if s.remote || s.wrapped || s.unknown != "" || s.command == "" {
			continue
		}
		m := before
		for _, k := range s.path {
			m = m.(map[string]any)[k]
		}
		entry := m.(map[string]any)
		entry["command"] = twCommand
		var args []any
		for _, a := range wrapArgs(s.name, f.wrapConfigs(configPath), s.command, s.args) {
			args = append(args, a)
		}
		entry["args"] = args
	}
	if !reflect.DeepEqual(before, after) {
		return fmt.Errorf("%s: rewriting would change more than the servers' command and args; nothing was changed, please report this and wrap the servers by hand", f.path)
	}
	return nil
}
