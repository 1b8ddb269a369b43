package claudecode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agentTimeout bounds one Claude Code run: a scripted conversation of a
// few turns takes seconds; a hang must fail the test, not CI.
const agentTimeout = 90 * time.Second

// workspace is one fresh machine for one Claude Code run: a home of its
// own (so nothing of the user's Claude Code or toolwarden state is read or
// written), the project folder Claude Code runs in, and toolwarden's
// config and audit log.
type workspace struct {
	home, project string // the project is also the folder the filesystem server serves
	config        string // toolwarden config
	audit         string // toolwarden's audit log (JSON Lines)
	fsServer      string // mcp-server-filesystem
	claude        string
	token         string   // the unique content of token.txt
	extraEnv      []string // more of Claude Code's environment, for one test
}

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	w := &workspace{claude: npmBin(t, "claude"), fsServer: npmBin(t, "mcp-server-filesystem")}
	base := t.TempDir()
	w.home = filepath.Join(base, "home")
	// Claude Code gives the filesystem server its working folder as the
	// one MCP root, which replaces the folders on the server's command
	// line: the served folder is the project.
	w.project = filepath.Join(base, "project")
	for _, d := range []string{w.home, filepath.Join(w.project, "secret")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	w.token = fmt.Sprintf("token-%d-%s", time.Now().UnixNano(), strings.ReplaceAll(t.Name(), "/", "-"))
	writeFile(t, filepath.Join(w.project, "token.txt"), w.token)
	w.audit = filepath.Join(base, "audit.jsonl")
	w.config = filepath.Join(base, "toolwarden.toml")
	// move_file hidden, writes asked, writes under secret/ denied.
	writeFile(t, w.config, fmt.Sprintf(`
[apps.fs.tools.move_file]
enabled = false

[apps.fs.tools.write_file]
approval_mode = "prompt"

[policies.argguard]
builtin = "argguard"
[policies.argguard.config]
rules = [{ tool = "write_file", arg = "path", deny_glob = %q, reason = "secret/ is off limits to agents" }]
`, filepath.Join(w.project, "secret", "**")))
	return w
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(b))
}

// env is Claude Code's whole environment: nothing inherited but PATH
// (after the toolwarden built for this run), every URL pointed at the
// scripted model, every background service off.
func (w *workspace) env(modelURL string) []string {
	return append([]string{
		"HOME=" + w.home,
		"PATH=" + binDir + string(os.PathListSeparator) + filepath.Dir(w.fsServer) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(w.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(w.home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(w.home, ".local", "state"),
		"TOOLWARDEN_CATALOG=" + filepath.Join(w.home, ".cache", "toolwarden", "catalog"),
		"ANTHROPIC_BASE_URL=" + modelURL,
		"ANTHROPIC_API_KEY=dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_BUG_COMMAND=1",
		// Anything that still reaches out lands on the model server, which
		// logs it as unknown, instead of the network.
		"HTTPS_PROXY=" + modelURL,
		"HTTP_PROXY=" + modelURL,
		"NO_PROXY=127.0.0.1,localhost",
		"https_proxy=" + modelURL,
		"http_proxy=" + modelURL,
		"no_proxy=127.0.0.1,localhost",
		// -p starts the conversation before MCP servers connect unless told
		// to wait: the scripted first turn calls an MCP tool.
		"MCP_CONNECTION_NONBLOCKING=false",
		"TERM=dumb",
	}, w.extraEnv...)
}

// finalResult is the text of stream-json's closing "result" event.
func finalResult(t *testing.T, stdout string) string {
	t.Helper()
	for _, ev := range streamEvents(t, stdout) {
		if ev["type"] == "result" {
			s, _ := ev["result"].(string)
			return s
		}
	}
	return ""
}

// result is what a Claude Code run printed.
type result struct {
	stdout, stderr string
	err            error
}

// runClaude runs `claude -p` in the project folder against the model.
func (w *workspace) runClaude(t *testing.T, m *model, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentTimeout)
	defer cancel()
	all := append([]string{"-p", "Use the fs tools as scripted.", "--output-format", "stream-json", "--verbose"}, args...)
	cmd := exec.CommandContext(ctx, w.claude, all...)
	cmd.Dir = w.project
	cmd.Env = w.env(m.URL())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("claude did not finish within %s\nstdout:\n%s\nstderr:\n%s", agentTimeout, out.String(), errb.String())
	}
	r := result{stdout: out.String(), stderr: errb.String(), err: err}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("claude %v: %v\nstdout:\n%s\nstderr:\n%s\nunknown requests: %v", all, err, r.stdout, r.stderr, m.unknownRequests())
		}
	})
	// The run must reach the script's last turn: a check of what the model
	// saw means nothing on a conversation that stopped early.
	if err != nil || finalResult(t, r.stdout) != m.script[len(m.script)-1].Text {
		t.Fatalf("claude did not finish the scripted conversation (exit: %v)", err)
	}
	return r
}

// The turns of the scripted conversation, the same through wrap and
// through the hook.
const (
	turnRead        = iota // read token.txt: allowed
	turnDeniedWrite        // write under secret/: denied by argguard
	turnAskedWrite         // write asked.txt: asked (approval_mode = "prompt")
	turnHiddenMove         // move_file, hidden by the config, called anyway
	turnParallel           // a denied write and an allowed read in one message
	turnEnd
)

func (w *workspace) script() []step {
	read := toolCall{"mcp__fs__read_text_file", map[string]any{"path": filepath.Join(w.project, "token.txt")}}
	return []step{
		turnRead:        calls(read),
		turnDeniedWrite: calls(toolCall{"mcp__fs__write_file", map[string]any{"path": w.deniedPath(), "content": "stolen"}}),
		turnAskedWrite:  calls(toolCall{"mcp__fs__write_file", map[string]any{"path": w.askedPath(), "content": "unapproved"}}),
		turnHiddenMove:  calls(toolCall{"mcp__fs__move_file", map[string]any{"source": filepath.Join(w.project, "token.txt"), "destination": w.movedPath()}}),
		// Two calls in one message, which Claude Code may run side by
		// side: each is still decided on its own.
		turnParallel: calls(toolCall{"mcp__fs__write_file", map[string]any{"path": w.parallelDeniedPath(), "content": "stolen"}}, read),
		turnEnd:      {Text: "scripted conversation finished"},
	}
}

func (w *workspace) parallelDeniedPath() string {
	return filepath.Join(w.project, "secret", "other.txt")
}
func (w *workspace) deniedPath() string { return filepath.Join(w.project, "secret", "key.txt") }
func (w *workspace) askedPath() string  { return filepath.Join(w.project, "asked.txt") }
func (w *workspace) movedPath() string  { return filepath.Join(w.project, "moved.txt") }

// userMCPServers writes Claude Code's user-scope MCP servers
// (~/.claude.json mcpServers), where both Claude Code and `toolwarden
// tools sync --agent claude` read them.
func (w *workspace) userMCPServers(t *testing.T, servers map[string]any) {
	t.Helper()
	writeJSON(t, filepath.Join(w.home, ".claude.json"), map[string]any{"mcpServers": servers})
}

// mustNotExist fails when the file a refused call would have made exists.
func mustNotExist(t *testing.T, path, why string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s exists: %s", path, why)
	}
}

// mustSay fails unless the text the model received contains every want
// (in any case).
func mustSay(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, s := range want {
		if !strings.Contains(strings.ToLower(got), strings.ToLower(s)) {
			t.Errorf("%s: want %q in the text the model received:\n%s", what, s, got)
		}
	}
}

// mustSayNoOneSaw fails unless the text tells the model that the approval
// prompt reached no one, and fails if it says a person refused: Claude
// Code -p shows no prompt, and a model told "the user denied" reports a
// refusal that never happened. The other engineers' wording of "no one
// saw" may vary, so a few phrasings count.
func mustSayNoOneSaw(t *testing.T, what, got string) {
	t.Helper()
	lower := strings.ToLower(got)
	said := false
	for _, s := range []string{"no one saw", "nobody saw", "no one was asked", "cannot show approval prompts", "cannot ask for"} {
		said = said || strings.Contains(lower, s)
	}
	if !said {
		t.Errorf("%s: the text the model received does not say that no one saw the approval prompt:\n%s", what, got)
	}
	for _, s := range []string{"user denied", "denied by the user", "user rejected", "rejected by the user", "user declined", "declined by the user"} {
		if strings.Contains(lower, s) {
			t.Errorf("%s: the model was told %q, but no one was asked:\n%s", what, s, got)
		}
	}
}

// streamEvents parses Claude Code's stream-json output, one JSON object a
// line.
func streamEvents(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(stdout, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("claude's stream-json output has a line that is not JSON (%v): %s", err, line)
		}
		out = append(out, ev)
	}
	return out
}

// serverDisplayName is the name Claude Code shows for the MCP server of
// the tool call in turn: its stream-json assistant message carries
// tool_use_meta[].server_display_name, which Claude Code takes from the
// server's serverInfo.name (unless the config gives a displayName).
func serverDisplayName(t *testing.T, stdout string, turn int) string {
	t.Helper()
	for _, ev := range streamEvents(t, stdout) {
		if ev["type"] != "assistant" {
			continue
		}
		for _, meta := range asList(ev["tool_use_meta"]) {
			mm := asMap(meta)
			if mm["id"] == toolUseID(turn, 0) {
				name, _ := mm["server_display_name"].(string)
				return name
			}
		}
	}
	t.Fatalf("claude's output has no tool_use_meta for the call in turn %d", turn)
	return ""
}

// upstreamServerInfoName is the serverInfo.name the filesystem server
// gives itself in its initialize answer, read from the server itself.
func upstreamServerInfoName(t *testing.T, fsServer, dir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, fsServer, dir)
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"0"}}}` + "\n")
	out, _ := cmd.Output()
	for _, line := range strings.Split(string(out), "\n") {
		var msg struct {
			Result struct {
				ServerInfo struct {
					Name string `json:"name"`
				} `json:"serverInfo"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(line), &msg) == nil && msg.Result.ServerInfo.Name != "" {
			return msg.Result.ServerInfo.Name
		}
	}
	t.Fatalf("mcp-server-filesystem gave no serverInfo.name in its initialize answer:\n%s", out)
	return ""
}

// auditCounts counts toolwarden's audit records by event and tool
// ("check read_text_file"): a check is one decision, an observe one
// call seen after it ran.
func auditCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("toolwarden's audit log: %v", err)
	}
	counts := map[string]int{}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var rec struct {
			Event    string `json:"event"`
			Decision struct {
				Tool string `json:"tool"`
			} `json:"decision"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit log line is not JSON (%v): %s", err, line)
		}
		counts[rec.Event+" "+rec.Decision.Tool]++
	}
	return counts
}

// mustReachOnlyTheModel fails when Claude Code tried to reach anything but
// the scripted model: every proxy variable points at the model server,
// which records what it does not serve.
func mustReachOnlyTheModel(t *testing.T, m *model) {
	t.Helper()
	if u := m.unknownRequests(); len(u) > 0 {
		t.Errorf("Claude Code made requests the scripted model does not serve (it must stay offline): %v", u)
	}
}

// checkParallel asserts on turnParallel: of two calls Claude Code makes
// side by side, the denied write does not run and the allowed read's
// result still reaches the model, each with its own answer.
func checkParallel(t *testing.T, w *workspace, m *model) {
	t.Helper()
	mustNotExist(t, w.parallelDeniedPath(), "the denied write made beside a read ran")
	got, isErr := m.toolResult(t, turnParallel, 0)
	if !isErr {
		t.Errorf("the denied write's result is not an error")
	}
	mustSay(t, "denied write beside a read", got, "secret/ is off limits to agents")
	got, isErr = m.toolResult(t, turnParallel, 1)
	if isErr || !strings.Contains(got, w.token) {
		t.Errorf("the read made beside a denied write (is_error %v) lacks the file's token %q:\n%s", isErr, w.token, got)
	}
}
