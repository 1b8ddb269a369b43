package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// Agent files come from anywhere (a cloned project's .mcp.json): whatever
// they hold, init never panics, and a rewrite it accepts re-reads with
// every wrappable entry wrapped.
func FuzzInitRewriteJSON(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "x"]}}}`,
		`{"mcpServers": {"a": {"command": "a"}, "a": {"command": "b", "args": []}}}`,
		"{\n  // c\n  \"mcpServers\": {\"x\": {\"command\": \"x\" /* d */}}\n}",
		`{"projects": {"/p": {"mcpServers": {"g": {"command": "uvx", "args": ["g"]}}}, "/p": {}}, "mcpServers": {}}`,
		`{"mcpServers": {"r": {"type": "http", "url": "u"}, "bad": {"command": 1}}}`,
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, src string, gemini bool) {
		agent, name := "Claude Code", ".claude.json"
		if gemini {
			agent, name = "Gemini CLI", "settings.json"
		}
		af := &agentFile{agent: agent, path: filepath.Join("/fuzz", name), format: "json", src: []byte(src)}
		if err := af.readJSON(); err != nil {
			return
		}
		if !gemini && af.root != nil && !json.Valid([]byte(src)) {
			t.Fatalf("accepted JSON that encoding/json refuses: %q", src)
		}
		checkFuzzRewrite(t, af)
	})
}

func FuzzInitRewriteTOML(f *testing.F) {
	for _, s := range []string{
		"[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\n",
		"[mcp_servers]\nfs.command = 'x' # c\n",
		"[mcp_servers]\nfs = { command = \"x\", env = { A = \"b\" } }\n",
		"[mcp_servers.\"a b\"]\ncommand = \"\"\"x\"\"\"\nargs = [\n  'y', # z\n]\n",
		"mcp_servers.x.command = \"c\"\r\nmcp_servers.x.url = \"u\"\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		af := &agentFile{agent: "Codex", path: "/fuzz/config.toml", format: "toml", src: []byte(src)}
		if err := af.readTOML(); err != nil {
			return
		}
		checkFuzzRewrite(t, af)
	})
}

func checkFuzzRewrite(t *testing.T, af *agentFile) {
	out, changed, err := af.rewrite("toolwarden", "/cfg/config.toml")
	if err != nil {
		return // refused: the file stays as it is
	}
	again := &agentFile{agent: af.agent, path: af.path, format: af.format, src: out}
	if af.format == "toml" {
		err = again.readTOML()
	} else {
		err = again.readJSON()
	}
	if err != nil {
		t.Fatalf("the rewrite of %q does not re-read: %v\n%s", af.src, err, out)
	}
	for _, s := range again.servers {
		if !s.remote && s.unknown == "" && s.command != "" && !s.wrapped {
			t.Fatalf("%s is not wrapped after rewriting %q:\n%s", s.name, af.src, out)
		}
	}
	if _, changed2, err := again.rewrite("toolwarden", "/cfg/config.toml"); err != nil || len(changed2) != 0 {
		t.Fatalf("rewriting twice changes %v (%v); first changed %v", changed2, err, changed)
	}
}
