package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// A newcomer's path: a fresh home whose Claude Code project (.mcp.json) and
// Codex config name the real npm server-filesystem. "toolwarden init
// --write-agents" and nothing else; then each agent starts the server
// exactly as its rewritten file says (the official TypeScript client
// spawning that command and args) and gets a protected session: reads run,
// a write is asked about by elicitation, a write under ~/.ssh is denied.
func TestInitThenOneCommandGivesAProtectedSession(t *testing.T) {
	t.Parallel()
	npmServer(t, "mcp-server-filesystem")
	sdk := nodeSDK(t)

	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(home, "project")
	data := filepath.Join(project, "data")
	mkdirs(t, data, filepath.Join(home, ".codex"), filepath.Join(home, ".ssh"))
	writeAt(t, filepath.Join(data, "hello.txt"), "hi from disk")
	// The project has server-filesystem among its npm dependencies, so npx
	// runs the pinned copy instead of fetching one (no network in tests).
	modules := filepath.Join(root, "scripts", "npm", "node_modules")
	if err := os.Symlink(modules, filepath.Join(project, "node_modules")); err != nil {
		t.Fatal(err)
	}
	pkg, err := os.ReadFile(filepath.Join(root, "scripts", "npm", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeAt(t, filepath.Join(project, "package.json"), string(pkg))
	mcpJSON := filepath.Join(project, ".mcp.json")
	writeAt(t, mcpJSON, `{
  "mcpServers": {
    "fs": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", `+jsonQuote(data)+`],
      "env": {"npm_config_offline": "true", "npm_config_update_notifier": "false"}
    }
  }
}
`)
	codexTOML := filepath.Join(home, ".codex", "config.toml")
	script := filepath.Join(modules, "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	writeAt(t, codexTOML, "# my Codex config\nmodel = \"o3\"\n\n[mcp_servers.files]\ncommand = \"node\"\nargs = ["+jsonQuote(script)+", "+jsonQuote(data)+"]\n")

	// A newcomer's environment: toolwarden on PATH (go install; init writes
	// its full path into the entries), a home of
	// their own, nothing else set.
	var environ []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "CODEX_HOME", "PATH":
			continue
		}
		environ = append(environ, kv)
	}
	environ = append(environ, "HOME="+home, "PATH="+filepath.Dir(twBin)+string(os.PathListSeparator)+os.Getenv("PATH"))

	init := exec.Command(twBin, "init", "--write-agents")
	init.Dir = project
	init.Env = environ
	out, err := init.CombinedOutput()
	if err != nil {
		t.Fatalf("toolwarden init --write-agents: %v\n%s", err, out)
	}
	config := filepath.Join(home, ".config", "toolwarden", "config.toml")
	mustContain(t, string(out), "config: wrote "+config)
	for _, p := range []string{config, codexTOML} {
		v := exec.Command(twBin, "validate", "--config", p)
		v.Env = environ
		if vout, err := v.CombinedOutput(); err != nil {
			t.Fatalf("validate %s: %v\n%s", p, err, vout)
		}
	}

	// Claude Code: the command and args of .mcp.json's entry, as written.
	var claude struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
	}
	b, err := os.ReadFile(mcpJSON)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &claude); err != nil {
		t.Fatalf(".mcp.json after init: %v\n%s", err, b)
	}
	fs := claude.MCPServers["fs"]
	if fs.Command != twBin || len(fs.Args) < 2 || fs.Args[0] != "wrap" {
		t.Fatalf(".mcp.json's fs entry does not run through toolwarden wrap:\n%s", b)
	}
	// Codex: the command and args of [mcp_servers.files], as written.
	var codex struct {
		Servers map[string]struct {
			Command string   `toml:"command"`
			Args    []string `toml:"args"`
		} `toml:"mcp_servers"`
	}
	tb, err := os.ReadFile(codexTOML)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toml.Decode(string(tb), &codex); err != nil {
		t.Fatal(err)
	}
	mustContain(t, string(tb), "# my Codex config\n")
	files := codex.Servers["files"]
	if files.Command != twBin || len(files.Args) < 2 || files.Args[0] != "wrap" {
		t.Fatalf("config.toml's files entry does not run through toolwarden wrap:\n%s", tb)
	}

	for _, c := range []struct {
		agent   string
		command string
		args    []string
		env     map[string]string
		answer  string
	}{
		{"Claude Code", fs.Command, fs.Args, fs.Env, "allow_once"},
		{"Codex", files.Command, files.Args, nil, "decline"},
	} {
		t.Run(c.agent, func(t *testing.T) {
			written := filepath.Join(data, "by-"+strings.ReplaceAll(c.agent, " ", "-")+".txt")
			key := filepath.Join(home, ".ssh", "authorized_keys")
			res := runTSFrom(t, sdk, project, environ, map[string]any{
				"command": c.command, "args": c.args, "env": c.env,
				"elicitation": true, "answers": []string{c.answer},
				"steps": []tsStep{
					{Op: "list"},
					{Op: "call", Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(data, "hello.txt")}},
					{Op: "call", Name: "list_directory", Arguments: map[string]any{"path": data}},
					{Op: "call", Name: "write_file", Arguments: map[string]any{"path": written, "content": "W"}},
					{Op: "call", Name: "write_file", Arguments: map[string]any{"path": key, "content": "ssh-ed25519 AAAA attacker"}},
				},
			})
			r := res.Results
			if len(r) != 5 || !contains(r[0].Tools, "read_text_file") || !contains(r[0].Tools, "write_file") {
				t.Fatalf("results: %+v", r)
			}
			if r[1].IsError || r[1].Text != "hi from disk" {
				t.Errorf("read: %+v", r[1])
			}
			if r[2].IsError || !strings.Contains(r[2].Text, "hello.txt") {
				t.Errorf("list_directory: %+v", r[2])
			}
			if len(res.Asked) != 1 {
				t.Fatalf("asked %d times, want once (the write only): %+v", len(res.Asked), res.Asked)
			}
			mustContain(t, res.Asked[0].Message, "write_file")
			mustContain(t, res.Asked[0].Message, written)
			if c.answer == "allow_once" {
				if r[3].IsError || !fileExists(written) {
					t.Errorf("approved write: %+v", r[3])
				}
			} else if !r[3].IsError || fileExists(written) {
				t.Errorf("declined write ran: %+v", r[3])
			}
			if !r[4].IsError || fileExists(key) {
				t.Errorf("write under ~/.ssh: %+v", r[4])
			}
			mustContain(t, r[4].Text, "~/.ssh")
		})
	}
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func writeAt(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
