package codex

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agent is one offline Codex: a fresh HOME and CODEX_HOME, the scripted
// model as its only provider, and a served folder for the filesystem
// server.
type agent struct {
	t         testing.TB
	codex     string // the codex launcher from npm
	fsServer  string // mcp-server-filesystem from npm
	home      string
	codexHome string
	work      string // Codex's working folder (-C)
	served    string // the folder mcp-server-filesystem serves
	model     *model
}

func newAgent(t testing.TB, script ...step) *agent {
	t.Helper()
	a := &agent{
		t:        t,
		codex:    npmBin(t, "codex"),
		fsServer: npmBin(t, "mcp-server-filesystem"),
		home:     t.TempDir(),
		work:     t.TempDir(),
		served:   t.TempDir(),
		model:    newModel(t, script...),
	}
	a.codexHome = filepath.Join(a.home, ".codex")
	if err := os.MkdirAll(a.codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	// Resolve symlinks once: the filesystem server compares resolved paths.
	if p, err := filepath.EvalSymlinks(a.served); err == nil {
		a.served = p
	}
	return a
}

// ConfigPath is Codex's user config, $CODEX_HOME/config.toml.
func (a *agent) ConfigPath() string { return filepath.Join(a.codexHome, "config.toml") }

// offlineConfig points Codex at the scripted model and turns off
// everything that would reach another host: update checks, analytics,
// OpenTelemetry export, feedback, web search.
func (a *agent) offlineConfig() string {
	return fmt.Sprintf(`model = "gpt-5-codex"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false
web_search = "disabled"

[analytics]
enabled = false

# Features that fetch from OpenAI or GitHub (plugin and app catalogs, model
# discovery, updates) or add tools the tests do not use.
[features]
plugins = false
remote_plugin = false
apps = false
tool_suggest = false
api_key_model_discovery = false
in_app_updates = false
image_generation = false
goals = false
skill_mcp_dependency_install = false

[agents]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
trace_exporter = "none"
metrics_exporter = "none"

[model_providers.scripted]
name = "scripted"
base_url = %q
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0
`, a.model.BaseURL())
}

// WriteConfig writes $CODEX_HOME/config.toml: the offline settings, then
// extra (MCP servers, apps, hooks).
func (a *agent) WriteConfig(extra string) {
	a.t.Helper()
	if err := os.WriteFile(a.ConfigPath(), []byte(a.offlineConfig()+"\n"+extra), 0o600); err != nil {
		a.t.Fatal(err)
	}
}

// execResult is one `codex exec`: what it printed and how it ended.
type execResult struct {
	Stdout, Stderr string
	Err            error
}

// Exec runs `codex exec` on prompt, bounded by a timeout, with no
// network but 127.0.0.1: every proxy variable points at the scripted
// model, which records any request for another host as unknown.
func (a *agent) Exec(prompt string, args ...string) execResult {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// --strict-config: a key this Codex does not know (a typo here, or a
	// setting renamed upstream) fails the run instead of being ignored.
	argv := append([]string{"exec", "--skip-git-repo-check", "--strict-config", "-C", a.work}, args...)
	argv = append(argv, prompt)
	cmd := exec.CommandContext(ctx, a.codex, argv...)
	cmd.Dir = a.work
	cmd.Env = a.env()
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("codex exec did not finish within 90s: %w", err)
	}
	r := execResult{Stdout: stdout.String(), Stderr: stderr.String(), Err: err}
	a.t.Cleanup(func() {
		if a.t.Failed() {
			a.t.Logf("codex exec stdout:\n%s\nstderr:\n%s", r.Stdout, r.Stderr)
		}
	})
	return r
}

// env is a fresh environment: only what Codex, node and the toolwarden
// binaries need, a fresh HOME and XDG dirs, a dummy key.
func (a *agent) env() []string {
	nodeDir := ""
	if p, err := exec.LookPath("node"); err == nil {
		nodeDir = filepath.Dir(p)
	}
	proxy := strings.TrimSuffix(a.model.srv.URL, "/")
	return []string{
		"HOME=" + a.home,
		"CODEX_HOME=" + a.codexHome,
		"XDG_CONFIG_HOME=" + filepath.Join(a.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(a.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(a.home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(a.home, ".local", "state"),
		"XDG_RUNTIME_DIR=" + filepath.Join(a.home, ".run"),
		"TOOLWARDEN_CATALOG=" + filepath.Join(a.home, "catalog"),
		"PATH=" + strings.Join([]string{binDir, nodeDir, "/usr/local/bin", "/usr/bin", "/bin"}, string(os.PathListSeparator)),
		"SCRIPTED_API_KEY=sk-test-dummy",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
		"RUST_LOG=warn",
		// Anything that would leave the machine goes to the model server
		// instead, which answers 404 and records it.
		"HTTP_PROXY=" + proxy, "HTTPS_PROXY=" + proxy, "ALL_PROXY=" + proxy,
		"http_proxy=" + proxy, "https_proxy=" + proxy, "all_proxy=" + proxy,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
	}
}

// Toolwarden runs the real toolwarden binary in the agent's environment
// and returns its combined output and exit code.
func (a *agent) Toolwarden(args ...string) (string, int) {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "toolwarden"), args...)
	cmd.Dir = a.work
	cmd.Env = a.env()
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		a.t.Fatalf("toolwarden %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), code
}

// secretReason is the argguard rule's reason, which the model must read.
const secretReason = "secret/ is off limits to agents"

// policyConfig writes the toolwarden config both front ends decide with:
// move_file hidden, create_directory asked about on every call, and writes
// under the served folder's secret/ denied by argguard. It returns its path.
func (a *agent) policyConfig() string {
	a.t.Helper()
	p := filepath.Join(a.home, "toolwarden.toml")
	cfg := fmt.Sprintf(`[apps.fs.tools.move_file]
enabled = false

[apps.fs.tools.create_directory]
approval_mode = "prompt"

[policies.argguard]
builtin = "argguard"
[policies.argguard.config]
rules = [{ tool = "write_file", arg = "path", deny_glob = %q, reason = %q }]
`, filepath.Join(a.served, "secret", "**"), secretReason)
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		a.t.Fatal(err)
	}
	// The folder exists, so a write under it fails only if toolwarden
	// stops it (the filesystem server creates no parent folders).
	if err := os.MkdirAll(filepath.Join(a.served, "secret"), 0o700); err != nil {
		a.t.Fatal(err)
	}
	return p
}

// Served returns the path of name in the served folder.
func (a *agent) Served(name string) string { return filepath.Join(a.served, name) }

// WriteServed writes a file into the served folder.
func (a *agent) WriteServed(name, content string) {
	a.t.Helper()
	p := a.Served(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		a.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		a.t.Fatal(err)
	}
}

// Offline fails the test if Codex tried to reach anything but the
// scripted model (the proxy variables send every such request there).
func (a *agent) Offline() {
	a.t.Helper()
	if u := a.model.Unknown(); len(u) > 0 {
		a.t.Errorf("Codex made requests the scripted model does not serve (network it must not use, or a side request to answer): %v", u)
	}
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
