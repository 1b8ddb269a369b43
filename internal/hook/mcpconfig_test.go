package hook_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/hook"
)

// agentPlaces copies testdata/agents (a home and a project folder, with
// each agent's config files as the agents write them) to a temporary
// folder, names the project in ~/.claude.json by its real path there, and
// returns where everything is.
func agentPlaces(t *testing.T) hook.Places {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/agents")); err != nil {
		t.Fatal(err)
	}
	home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
	claude := filepath.Join(home, ".claude.json")
	data, err := os.ReadFile(claude)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claude, []byte(strings.Replace(string(data), `"/work/project"`, `"`+project+`"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, "DOCS_TOKEN": "tok", "PATH": "/usr/bin"}
	return hook.Places{Home: home, Project: project, Getenv: func(k string) string { return env[k] }, Environ: []string{"PATH=/usr/bin", "LOG_LEVEL=debug"}}
}

func byName(t *testing.T, servers []hook.Server, errs []error) map[string]hook.Server {
	t.Helper()
	for _, err := range errs {
		t.Fatal(err)
	}
	m := map[string]hook.Server{}
	var names []string
	for _, s := range servers {
		m[s.Name] = s
		names = append(names, s.Name)
	}
	t.Logf("servers: %v", names)
	return m
}

func envOf(s hook.Server, key string) string {
	for _, kv := range s.Spec.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}

func TestClaudeCodeServersComeFromClaudeJSONAndTheProjectsMCPJSON(t *testing.T) {
	t.Parallel()
	p := agentPlaces(t)
	servers, errs := p.AgentServers(hook.Claude)
	m := byName(t, servers, errs)
	if _, ok := m["other-only"]; ok {
		t.Error("another project's local server was listed")
	}
	mem := m["memory"]
	if mem.Err != nil || mem.Spec.Command != "npx" || envOf(mem, "MEMORY_FILE_PATH") != p.Home+"/.memory.json" || envOf(mem, "PATH") != "/usr/bin" {
		t.Errorf("memory (user scope, ${HOME} expanded, agent env inherited): %+v", mem)
	}
	if mem.Spec.Dir != p.Project {
		t.Errorf("a stdio server starts in the project folder: %q", mem.Spec.Dir)
	}
	docs := m["docs"]
	if docs.Err != nil || docs.Spec.URL != "https://mcp.example.com/mcp" || docs.Spec.Headers["Authorization"] != "Bearer tok" {
		t.Errorf("docs (http): %+v", docs)
	}
	gh := m["github"]
	if gh.Err != nil || gh.Spec.Command != "docker" || envOf(gh, "GITHUB_PERSONAL_ACCESS_TOKEN") != "none" || !strings.Contains(gh.Source, "projects[") {
		t.Errorf("github (local scope, ${VAR:-default}): %+v", gh)
	}
	fs := m["fs"]
	if fs.Err != nil || !slices.Equal(fs.Spec.Args, []string{"-y", "@modelcontextprotocol/server-filesystem", "."}) || !strings.HasSuffix(fs.Source, ".mcp.json (mcpServers.fs)") {
		t.Errorf("fs (project .mcp.json): %+v", fs)
	}
	if ev := m["events"]; ev.Err == nil || !strings.Contains(ev.Err.Error(), "sse") {
		t.Errorf("an SSE server must say it cannot be listed: %+v", ev)
	}
	// A project server runs only once Claude Code was told to trust it.
	if fs.Untrusted != "" || m["events"].Untrusted == "" {
		t.Errorf("trust: fs (enabled) %q, events (not enabled) %q", fs.Untrusted, m["events"].Untrusted)
	}
	for _, user := range []string{"memory", "docs", "github"} {
		if m[user].Untrusted != "" {
			t.Errorf("%s is the user's own, yet untrusted: %q", user, m[user].Untrusted)
		}
	}
	// The project file comes last: where a name is in both, the agent runs
	// the project's.
	if servers[len(servers)-1].Source != fs.Source && servers[len(servers)-2].Source != fs.Source {
		t.Errorf(".mcp.json is not read last: %v", servers)
	}
}

func TestGeminiCLIServersComeFromBothSettingsFiles(t *testing.T) {
	t.Parallel()
	p := agentPlaces(t)
	servers, errs := p.AgentServers(hook.Gemini)
	m := byName(t, servers, errs)
	mem := m["memory"]
	if mem.Err != nil || envOf(mem, "MEMORY_FILE_PATH") != p.Home+"/.gemini-memory.json" {
		t.Errorf("memory ($HOME expanded in a settings.json with comments): %+v", mem)
	}
	if docs := m["docs"]; docs.Err != nil || docs.Spec.URL != "https://mcp.example.com/mcp" || docs.Spec.Headers["Authorization"] != "Bearer tok" {
		t.Errorf("docs (httpUrl): %+v", docs)
	}
	if fs := m["fs"]; fs.Err != nil || fs.Spec.Dir != filepath.Join(p.Project, "sub") {
		t.Errorf("fs (cwd relative to the project): %+v", fs)
	}
	if m["fs"].Untrusted == "" || m["memory"].Untrusted != "" {
		t.Errorf("trust without trustedFolders.json: fs %q, memory %q", m["fs"].Untrusted, m["memory"].Untrusted)
	}
	if ev := m["events"]; ev.Err == nil {
		t.Errorf("an SSE url must say it cannot be listed: %+v", ev)
	}
}

func TestCodexServersComeFromConfigTOML(t *testing.T) {
	t.Parallel()
	p := agentPlaces(t)
	servers, errs := p.AgentServers(hook.Codex)
	m := byName(t, servers, errs)
	if _, ok := m["off"]; ok {
		t.Error("a disabled server was listed")
	}
	fs := m["fs"]
	if fs.Err != nil || fs.Spec.Command != "npx" || envOf(fs, "LOG_LEVEL") != "warn" || !strings.Contains(fs.Source, "mcp_servers.fs") {
		t.Errorf("fs: %+v", fs)
	}
	if docs := m["docs"]; docs.Err != nil || docs.Spec.Headers["Authorization"] != "Bearer tok" {
		t.Errorf("docs (bearer_token_env_var): %+v", docs)
	}
}

func TestMissingAgentFilesHoldNoServers(t *testing.T) {
	t.Parallel()
	empty := t.TempDir()
	p := hook.Places{Home: empty, Project: empty, Getenv: func(string) string { return "" }}
	for _, a := range []hook.Agent{hook.Claude, hook.Gemini, hook.Codex} {
		if s, errs := p.AgentServers(a); len(s) != 0 || len(errs) != 0 {
			t.Errorf("%s: %v %v", a, s, errs)
		}
	}
}

func TestABrokenAgentFileIsAnErrorThatNamesIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers": {"fs": `), 0o600); err != nil {
		t.Fatal(err)
	}
	p := hook.Places{Home: dir, Project: dir, Getenv: func(string) string { return "" }}
	_, errs := p.AgentServers(hook.Claude)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), ".mcp.json") {
		t.Fatalf("errs = %v", errs)
	}
}

// Comments are blanked, never anything else: the result has the same
// length and lines (so JSON errors point where they did), and text
// without a comment marker is left alone.
func FuzzStripComments(f *testing.F) {
	f.Add([]byte(`{"a": "b // not a comment", /* c */ "d": 1} // e`))
	f.Add([]byte("{\n// x\n\"a\": \"\\\"/*\"}"))
	f.Add([]byte(`/* unterminated`))
	f.Fuzz(func(t *testing.T, data []byte) {
		out := hook.StripCommentsForTest(data)
		if len(out) != len(data) {
			t.Fatalf("length %d, want %d", len(out), len(data))
		}
		for i := range data {
			if data[i] == '\n' && out[i] != '\n' {
				t.Fatalf("newline at %d blanked", i)
			}
			if out[i] != data[i] && out[i] != ' ' {
				t.Fatalf("byte %d changed to %q", i, out[i])
			}
		}
		if !strings.Contains(string(data), "/") && string(out) != string(data) {
			t.Fatal("text without comments changed")
		}
	})
}

// A project's own servers come with the repository: only the agent's own
// trust lets them run.
func TestProjectServersRunOnlyWhereTheAgentTrustsThem(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		agent   hook.Agent
		file    string // under home
		content func(project string) string
		trusted bool
	}{
		{"Claude Code without any record", hook.Claude, ".claude.json", func(string) string { return `{}` }, false},
		{"Claude Code with the server enabled", hook.Claude, ".claude.json", func(p string) string {
			return `{"projects":{"` + p + `":{"enabledMcpjsonServers":["fs"]}}}`
		}, true},
		{"Claude Code with all project servers enabled", hook.Claude, ".claude.json", func(p string) string {
			return `{"projects":{"` + p + `":{"enableAllProjectMcpServers":true}}}`
		}, true},
		{"Claude Code with the server disabled", hook.Claude, ".claude.json", func(p string) string {
			return `{"projects":{"` + p + `":{"enableAllProjectMcpServers":true,"disabledMcpjsonServers":["fs"]}}}`
		}, false},
		{"Claude Code with another project enabled", hook.Claude, ".claude.json", func(p string) string {
			return `{"projects":{"` + p + `-other":{"enabledMcpjsonServers":["fs"]}}}`
		}, false},
		{"Gemini CLI without trusted folders", hook.Gemini, ".gemini/trustedFolders.json", func(string) string { return `{}` }, false},
		{"Gemini CLI with the folder trusted", hook.Gemini, ".gemini/trustedFolders.json", func(p string) string { return `{"` + p + `":"TRUST_FOLDER"}` }, true},
		{"Gemini CLI with a parent trusted", hook.Gemini, ".gemini/trustedFolders.json", func(p string) string { return `{"` + filepath.Dir(p) + `":"TRUST_FOLDER"}` }, true},
		{"Gemini CLI with a sibling's parent trusted", hook.Gemini, ".gemini/trustedFolders.json", func(p string) string { return `{"` + filepath.Join(filepath.Dir(p), "x") + `":"TRUST_PARENT"}` }, true},
		{"Gemini CLI with a look-alike folder trusted", hook.Gemini, ".gemini/trustedFolders.json", func(p string) string { return `{"` + p + `x":"TRUST_FOLDER"}` }, false},
		{"Gemini CLI with the folder distrusted below a trusted one", hook.Gemini, ".gemini/trustedFolders.json", func(p string) string {
			return `{"` + filepath.Dir(p) + `":"TRUST_FOLDER","` + p + `":"DO_NOT_TRUST"}`
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			home, project := filepath.Join(dir, "home"), filepath.Join(dir, "project")
			for _, f := range []string{filepath.Join(project, ".mcp.json"), filepath.Join(project, ".gemini", "settings.json"), filepath.Join(home, c.file)} {
				if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			servers := `{"mcpServers":{"fs":{"command":"touch","args":["/tmp/should-not-run"]}}}`
			os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(servers), 0o600)
			os.WriteFile(filepath.Join(project, ".gemini", "settings.json"), []byte(servers), 0o600)
			os.WriteFile(filepath.Join(home, c.file), []byte(c.content(project)), 0o600)
			p := hook.Places{Home: home, Project: project, Getenv: func(string) string { return "" }}
			s, errs := p.AgentServers(c.agent)
			if len(errs) != 0 || len(s) != 1 {
				t.Fatalf("%v %v", s, errs)
			}
			if (s[0].Untrusted == "") != c.trusted {
				t.Fatalf("untrusted %q, want trusted %v", s[0].Untrusted, c.trusted)
			}
		})
	}
}
