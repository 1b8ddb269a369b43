package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// initHome is a fresh home with a project folder, for running init
// in-process as a newcomer would.
type initHome struct {
	t       *testing.T
	home    string
	project string
}

func newInitHome(t *testing.T) *initHome {
	t.Helper()
	home := t.TempDir()
	h := &initHome{t: t, home: home, project: filepath.Join(home, "project")}
	if err := os.MkdirAll(h.project, 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *initHome) write(rel, content string) string {
	h.t.Helper()
	p := filepath.Join(h.home, rel)
	writeTestFile(h.t, p, content)
	return p
}

func (h *initHome) read(p string) string {
	h.t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		h.t.Fatal(err)
	}
	return string(b)
}

func (h *initHome) configPath() string {
	return filepath.Join(h.home, ".config", "toolwarden", "config.toml")
}

// init runs "toolwarden init --project <project> args..." with HOME set.
func (h *initHome) init(args ...string) (int, string, string) {
	h.t.Helper()
	vars := map[string]string{"HOME": h.home}
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	code := run(e, append([]string{"init", "--project", h.project}, args...))
	return code, out.String(), errb.String()
}

func (h *initHome) wrapped(name string, command string, args ...string) []string {
	return append([]string{"wrap", "--app", name, "--config", h.configPath(), "--", command}, args...)
}

// wrappedCodex is a Codex entry as init rewrites it: toolwarden's config,
// then Codex's own, so that the rules kept there still count.
func (h *initHome) wrappedCodex(name string, command string, args ...string) []string {
	return append([]string{"wrap", "--app", name, "--config", h.configPath(), "--config", filepath.Join(h.home, ".codex", "config.toml"), "--", command}, args...)
}

// jsonEntry decodes the command and args of the server at keys.
func jsonEntry(t *testing.T, src string, keys ...string) (string, []string) {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("rewritten JSON does not parse: %v\n%s", err, src)
	}
	for _, k := range keys {
		doc = doc.(map[string]any)[k]
	}
	m := doc.(map[string]any)
	var args []string
	for _, a := range m["args"].([]any) {
		args = append(args, a.(string))
	}
	return m["command"].(string), args
}

func tomlEntry(t *testing.T, src, name string) (string, []string) {
	t.Helper()
	var doc struct {
		Servers map[string]struct {
			Command string   `toml:"command"`
			Args    []string `toml:"args"`
		} `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(src, &doc); err != nil {
		t.Fatalf("rewritten TOML does not parse: %v\n%s", err, src)
	}
	s := doc.Servers[name]
	return s.Command, s.Args
}

func TestInitFindsAndWrapsEachAgentsServers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		file  string // relative to the home
		src   string
		check func(t *testing.T, h *initHome, out string)
	}{
		{
			name: "Claude Code's project .mcp.json",
			file: "project/.mcp.json",
			src:  `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/src"]}}}`,
			check: func(t *testing.T, h *initHome, out string) {
				cmd, args := jsonEntry(t, out, "mcpServers", "fs")
				if want := h.wrapped("fs", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/src"); cmd != "toolwarden" || !reflect.DeepEqual(args, want) {
					t.Fatalf("got %s %q, want toolwarden %q", cmd, args, want)
				}
			},
		},
		{
			name: "Claude Code's ~/.claude.json, global and per project",
			file: ".claude.json",
			src: `{"numStartups": 3, "mcpServers": {"mem": {"type": "stdio", "command": "mcp-server-memory", "env": {"K": "v"}}},
 "projects": {"/work/a": {"allowedTools": [], "mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}, "/work/b": {}}}`,
			check: func(t *testing.T, h *initHome, out string) {
				if cmd, args := jsonEntry(t, out, "mcpServers", "mem"); cmd != "toolwarden" || !reflect.DeepEqual(args, h.wrapped("mem", "mcp-server-memory")) {
					t.Fatalf("global: %s %q", cmd, args)
				}
				if cmd, args := jsonEntry(t, out, "projects", "/work/a", "mcpServers", "git"); cmd != "toolwarden" || !reflect.DeepEqual(args, h.wrapped("git", "uvx", "mcp-server-git")) {
					t.Fatalf("per project: %s %q", cmd, args)
				}
				initMustContain(t, out, `"env": {"K": "v"}`)
				initMustContain(t, out, `"numStartups": 3`)
			},
		},
		{
			name: "Codex's ~/.codex/config.toml",
			file: ".codex/config.toml",
			src:  "model = \"o3\"\n\n[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/src\"]\nstartup_timeout_sec = 20\n",
			check: func(t *testing.T, h *initHome, out string) {
				cmd, args := tomlEntry(t, out, "fs")
				if want := h.wrappedCodex("fs", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/src"); cmd != "toolwarden" || !reflect.DeepEqual(args, want) {
					t.Fatalf("got %s %q, want toolwarden %q", cmd, args, want)
				}
				initMustContain(t, out, "startup_timeout_sec = 20\n")
				// What init writes into a Codex config is still a valid config.
				if code, _, stderr := runCLI(t, "", "validate", "--config", filepath.Join(h.home, ".codex", "config.toml")); code != exitOK {
					t.Fatalf("validate: %s", stderr)
				}
			},
		},
		{
			name: "Gemini CLI's ~/.gemini/settings.json, comments and all",
			file: ".gemini/settings.json",
			src:  "{\n  // my servers\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"fetch\": { \"command\": \"uvx\", \"args\": [\"mcp-server-fetch\"], \"timeout\": 5000 } /* fast */\n  }\n}\n",
			check: func(t *testing.T, h *initHome, out string) {
				initMustContain(t, out, "// my servers")
				initMustContain(t, out, "/* fast */")
				stripped := strings.NewReplacer("// my servers", "", "/* fast */", "").Replace(out)
				if cmd, args := jsonEntry(t, stripped, "mcpServers", "fetch"); cmd != "toolwarden" || !reflect.DeepEqual(args, h.wrapped("fetch", "uvx", "mcp-server-fetch")) {
					t.Fatalf("got %s %q", cmd, args)
				}
			},
		},
		{
			name: "Gemini CLI's project .gemini/settings.json",
			file: "project/.gemini/settings.json",
			src:  `{"mcpServers": {"db": {"command": "node", "args": ["server.js"], "cwd": "./srv"}}}`,
			check: func(t *testing.T, h *initHome, out string) {
				if cmd, args := jsonEntry(t, out, "mcpServers", "db"); cmd != "toolwarden" || !reflect.DeepEqual(args, h.wrapped("db", "node", "server.js")) {
					t.Fatalf("got %s %q", cmd, args)
				}
				initMustContain(t, out, `"cwd": "./srv"`)
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newInitHome(t)
			p := h.write(c.file, c.src)
			code, stdout, stderr := h.init("--write-agents")
			if code != exitOK {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			c.check(t, h, h.read(p))
			if got := h.read(p + ".bak"); got != c.src {
				t.Fatalf("backup differs from the original:\n%s", got)
			}
			// The config names the servers it found.
			for _, n := range []string{"fs", "mem", "git", "fetch", "db"} {
				if strings.Contains(c.src, `"`+n+`"`) || strings.Contains(c.src, "."+n+"]") {
					initMustContain(t, h.read(h.configPath()), "# [apps."+n+"]")
				}
			}
		})
	}
}

func TestInitNeverRewritesAMalformedFile(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, file, src, where string
	}{
		{"JSON with a missing comma", "project/.mcp.json", "{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\" \"args\": []}\n  }\n}\n", ".mcp.json:3:29:"},
		{"JSON with trailing garbage", ".claude.json", "{\"mcpServers\": {}}\n}\n", ".claude.json:2:1:"},
		{"JSON that is not an object", ".gemini/settings.json", "[1, 2]", "settings.json:1:1:"},
		{"servers that are not an object", "project/.mcp.json", "{\n \"mcpServers\": [\"fs\"]\n}", ".mcp.json:2:16:"},
		{"TOML with a bad value", ".codex/config.toml", "[mcp_servers.fs]\ncommand = npx\n", "config.toml:2:11:"},
		{"TOML with a duplicate table", ".codex/config.toml", "[mcp_servers.fs]\ncommand = \"a\"\n[mcp_servers.fs]\ncommand = \"b\"\n", "config.toml:3:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newInitHome(t)
			p := h.write(c.file, c.src)
			code, stdout, stderr := h.init("--write-agents")
			if code != exitError {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, exitError, stdout, stderr)
			}
			initMustContain(t, stderr, c.where)
			initMustContain(t, stderr, "not changed")
			if h.read(p) != c.src {
				t.Fatal("a malformed file was changed")
			}
			if _, err := os.Stat(p + ".bak"); err == nil {
				t.Fatal("a malformed file got a backup, as if it were rewritten")
			}
			// The config is still written: one bad file does not stop the rest.
			if _, err := os.Stat(h.configPath()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestInitShowsTheDiffAndChangesNothingWithoutTheFlag(t *testing.T) {
	t.Parallel()
	h := newInitHome(t)
	src := "{\n  \"mcpServers\": {\n    \"fs\": {\n      \"command\": \"npx\",\n      \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/src\"]\n    }\n  }\n}\n"
	p := h.write("project/.mcp.json", src)
	code, stdout, stderr := h.init()
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"--- " + p + "\n+++ " + p + "\n@@ -1,8 +1,8 @@\n",
		"-      \"command\": \"npx\",\n-      \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/src\"]\n+      \"command\": \"toolwarden\",\n",
		"toolwarden init --write-agents",
	} {
		initMustContain(t, stdout, want)
	}
	if h.read(p) != src {
		t.Fatal("init changed an agent's file without --write-agents")
	}
	if _, err := os.Stat(p + ".bak"); err == nil {
		t.Fatal("a backup was written though nothing was changed")
	}

	// --dry-run writes nothing at all, not even the config.
	h2 := newInitHome(t)
	p2 := h2.write("project/.mcp.json", src)
	code, stdout, _ = h2.init("--write-agents", "--dry-run")
	if code != exitOK || h2.read(p2) != src {
		t.Fatalf("--dry-run: exit %d, file changed: %v", code, h2.read(p2) != src)
	}
	initMustContain(t, stdout, "+      \"command\": \"toolwarden\",")
	if _, err := os.Stat(h2.configPath()); err == nil {
		t.Fatal("--dry-run wrote the config")
	}
}

func TestInitTwiceChangesNothingTheSecondTime(t *testing.T) {
	t.Parallel()
	h := newInitHome(t)
	mcp := h.write("project/.mcp.json", `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/src"]}}}`)
	codex := h.write(".codex/config.toml", "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/src\"]\n")
	if code, _, stderr := h.init("--write-agents"); code != exitOK {
		t.Fatal(stderr)
	}
	first := map[string]string{mcp: h.read(mcp), codex: h.read(codex), h.configPath(): h.read(h.configPath())}
	code, stdout, stderr := h.init("--write-agents")
	if code != exitOK {
		t.Fatal(stderr)
	}
	for p, want := range first {
		if h.read(p) != want {
			t.Errorf("%s changed on the second run", p)
		}
		if _, err := os.Stat(p + ".bak.1"); err == nil {
			t.Errorf("%s got a second backup", p)
		}
	}
	if strings.Contains(stdout, "+++") {
		t.Fatalf("the second run offers changes:\n%s", stdout)
	}
	initMustContain(t, stdout, "already behind toolwarden")
	initMustContain(t, stdout, "exists; keeping it")
}

func TestInitKeepsEverythingElseInTheFile(t *testing.T) {
	t.Parallel()
	t.Run("TOML comments, other tables and key order", func(t *testing.T) {
		t.Parallel()
		h := newInitHome(t)
		src := `# my Codex config
model = "o3"  # the model

[mcp_servers.fs]   # files
command = "npx"    # via npx
args = [
  "-y",            # yes
  "@modelcontextprotocol/server-filesystem",
  "/src",
]
env = { TOKEN = "x" }

[mcp_servers.docs]
url = "https://example.com/mcp"

[mcp_servers.inline]
sqlite = { command = "mcp-server-sqlite" }

[mcp_servers]
dotted.command = 'uvx'

[apps.fs]
destructive_enabled = false
`
		p := h.write(".codex/config.toml", src)
		if code, _, stderr := h.init("--write-agents"); code != exitOK {
			t.Fatal(stderr)
		}
		out := h.read(p)
		for _, keep := range []string{"# my Codex config\nmodel = \"o3\"  # the model\n", "[mcp_servers.fs]   # files\ncommand = \"toolwarden\"    # via npx\n",
			"env = { TOKEN = \"x\" }\n\n[mcp_servers.docs]\nurl = \"https://example.com/mcp\"\n", "[apps.fs]\ndestructive_enabled = false\n"} {
			initMustContain(t, out, keep)
		}
		if cmd, args := tomlEntry(t, out, "fs"); cmd != "toolwarden" || !reflect.DeepEqual(args, h.wrappedCodex("fs", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/src")) {
			t.Fatalf("fs: %s %q", cmd, args)
		}
		// mcp_servers.inline is a table whose only key is "sqlite": it
		// is not a server; "dotted" is one, written as a dotted key.
		if cmd, args := tomlEntry(t, out, "dotted"); cmd != "toolwarden" || !reflect.DeepEqual(args, h.wrappedCodex("dotted", "uvx")) {
			t.Fatalf("dotted: %s %q\n%s", cmd, args, out)
		}
		initMustContain(t, out, "dotted.command = \"toolwarden\"\ndotted.args = [")
	})
	t.Run("JSON key order and other keys", func(t *testing.T) {
		t.Parallel()
		h := newInitHome(t)
		src := "{\n  \"zeta\": 1,\n  \"mcpServers\": {\n    \"b\": {\n      \"env\": {\"X\": \"1\"},\n      \"command\": \"mcp-b\"\n    },\n    \"a\": {\"command\": \"mcp-a\", \"args\": []}\n  },\n  \"alpha\": [true, null, 1.5e3]\n}\n"
		p := h.write("project/.mcp.json", src)
		if code, _, stderr := h.init("--write-agents"); code != exitOK {
			t.Fatal(stderr)
		}
		out := h.read(p)
		want := "{\n  \"zeta\": 1,\n  \"mcpServers\": {\n    \"b\": {\n      \"env\": {\"X\": \"1\"},\n      \"command\": \"toolwarden\",\n      \"args\": [\n" +
			"        \"wrap\",\n        \"--app\",\n        \"b\",\n        \"--config\",\n        " + jsonString(h.configPath()) + ",\n        \"--\",\n        \"mcp-b\"\n      ]\n    },\n" +
			"    \"a\": {\"command\": \"toolwarden\", \"args\": [\"wrap\", \"--app\", \"a\", \"--config\", " + jsonString(h.configPath()) + ", \"--\", \"mcp-a\"]}\n  },\n  \"alpha\": [true, null, 1.5e3]\n}\n"
		if out != want {
			t.Fatalf("got:\n%s\nwant:\n%s", out, want)
		}
	})
}

func TestInitQuotesArgumentsExactly(t *testing.T) {
	t.Parallel()
	odd := []string{"/My Documents/src", `say "hi"`, `C:\tools\x`, "tab\there", "ünïcode ✓", "$HOME", "<&>", ""}
	h := newInitHome(t)
	h.write("project/.mcp.json", "")
	jsonArgs, _ := json.Marshal(odd)
	mcp := h.write("project/.mcp.json", `{"mcpServers": {"my server": {"command": "/opt/My Tools/srv", "args": `+string(jsonArgs)+`}}}`)
	var tomlArgs []string
	for _, a := range odd {
		tomlArgs = append(tomlArgs, tomlString(a))
	}
	codex := h.write(".codex/config.toml", "[mcp_servers.\"my server\"]\ncommand = '/opt/My Tools/srv'\nargs = ["+strings.Join(tomlArgs, ", ")+"]\n")
	// The config path itself has a space.
	cfg := filepath.Join(h.home, "My Config", "tw.toml")
	if code, _, stderr := h.init("--write-agents", "--config", cfg); code != exitOK {
		t.Fatal(stderr)
	}
	want := append([]string{"wrap", "--app", "my server", "--config", cfg, "--", "/opt/My Tools/srv"}, odd...)
	if cmd, args := jsonEntry(t, h.read(mcp), "mcpServers", "my server"); cmd != "toolwarden" || !reflect.DeepEqual(args, want) {
		t.Fatalf("JSON: %s %q", cmd, args)
	}
	wantCodex := append([]string{"wrap", "--app", "my server", "--config", cfg, "--config", codex, "--", "/opt/My Tools/srv"}, odd...)
	if cmd, args := tomlEntry(t, h.read(codex), "my server"); cmd != "toolwarden" || !reflect.DeepEqual(args, wantCodex) {
		t.Fatalf("TOML: %s %q", cmd, args)
	}
	initMustContain(t, h.read(cfg), `# [apps."my server"]`)
}

func TestInitConfigValidatesAndIsNeverOverwrittenWithoutForce(t *testing.T) {
	t.Parallel()
	h := newInitHome(t)
	h.write("project/.mcp.json", `{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}}}`)
	if code, _, stderr := h.init(); code != exitOK {
		t.Fatal(stderr)
	}
	cfg := h.configPath()
	if code, stdout, stderr := runCLI(t, "", "validate", "--config", cfg); code != exitOK || stderr != "" {
		t.Fatalf("validate: exit %d\n%s%s", code, stdout, stderr)
	}
	text := h.read(cfg)
	for _, want := range []string{`default_tools_approval_mode = "auto"`, `builtin = "trifecta"`, `builtin = "argguard"`, `deny_glob = "~/.ssh/**"`, `ask_regex = '\brm`} {
		initMustContain(t, text, want)
	}

	mine := "# mine\n[apps._default]\ntrust = \"none\"\n"
	if err := os.WriteFile(cfg, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stdout, _ := h.init(); code != exitOK || h.read(cfg) != mine {
		t.Fatalf("init replaced an existing config without --force (exit %d)\n%s", code, stdout)
	}
	if code, _, stderr := h.init("--force"); code != exitOK {
		t.Fatal(stderr)
	}
	if h.read(cfg+".bak") != mine {
		t.Fatal("--force did not keep the old config as a backup")
	}
	if h.read(cfg) == mine {
		t.Fatal("--force did not write the starter config")
	}
	// A second --force keeps both backups.
	if code, _, stderr := h.init("--force"); code != exitOK {
		t.Fatal(stderr)
	}
	if h.read(cfg+".bak") != mine {
		t.Fatal("a later backup overwrote the first")
	}
	if _, err := os.Stat(cfg + ".bak.1"); err != nil {
		t.Fatal(err)
	}
}

func TestInitConfigCannotBeInjectedThroughAServerName(t *testing.T) {
	t.Parallel()
	h := newInitHome(t)
	// A cloned project's .mcp.json is written by whoever wrote the project.
	evil := "x\n[policies.trifecta]\nenabled = false\n#"
	b, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{evil: map[string]any{"command": "srv\r\n[apps._default]\r\ntrust = 'full'"}}})
	h.write("project/.mcp.json", string(b))
	if code, _, stderr := h.init(); code != exitOK {
		t.Fatal(stderr)
	}
	var cfg map[string]any
	if _, err := toml.Decode(h.read(h.configPath()), &cfg); err != nil {
		t.Fatalf("the config does not parse: %v", err)
	}
	trifecta := cfg["policies"].(map[string]any)["trifecta"].(map[string]any)
	if _, ok := trifecta["enabled"]; ok {
		t.Fatal("a server name set policies.trifecta.enabled")
	}
	if trust := cfg["apps"].(map[string]any)["_default"].(map[string]any)["trust"]; trust != "pinned" {
		t.Fatalf("a server command set trust = %v", trust)
	}
	if code, _, stderr := runCLI(t, "", "validate", "--config", h.configPath()); code != exitOK {
		t.Fatalf("validate: %s", stderr)
	}
}

func TestInitFromNothingWritesAConfigAndSaysHowToWrap(t *testing.T) {
	t.Parallel()
	h := newInitHome(t)
	code, stdout, stderr := h.init()
	if code != exitOK {
		t.Fatal(stderr)
	}
	initMustContain(t, stdout, "config: wrote "+h.configPath())
	initMustContain(t, stdout, "No MCP servers found")
	initMustContain(t, stdout, "toolwarden wrap --app NAME --config "+h.configPath())
}

func TestInitRefusesToWriteAFileThatChangedMeanwhile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	if err := os.WriteFile(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := writeWithBackup(p, []byte("old"), []byte("mine"), 0o600); err == nil || !strings.Contains(err.Error(), "changed while init was running") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatal("the file was overwritten")
	}
}

func TestUnifiedDiffShowsOnlyTheChangedLinesWithContext(t *testing.T) {
	t.Parallel()
	var before, after strings.Builder
	for i := 1; i <= 20; i++ {
		line := "line " + string(rune('a'+i)) + "\n"
		before.WriteString(line)
		switch i {
		case 5:
			after.WriteString("changed\n")
		case 15:
			after.WriteString(line + "added\n")
		default:
			after.WriteString(line)
		}
	}
	got := unifiedDiff("f", []byte(before.String()), []byte(after.String()))
	want := "--- f\n+++ f\n@@ -2,7 +2,7 @@\n line c\n line d\n line e\n-line f\n+changed\n line g\n line h\n line i\n" +
		"@@ -13,6 +13,7 @@\n line n\n line o\n line p\n+added\n line q\n line r\n line s\n"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}

func initMustContain(t *testing.T, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Fatalf("want %q in:\n%s", want, got)
	}
}
