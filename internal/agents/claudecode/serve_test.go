package claudecode

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

// serveListening is the one line `toolwarden serve` prints once it
// accepts requests.
var serveListening = regexp.MustCompile(`toolwarden serve: listening on (http://\S+/mcp)`)

// startServe runs `toolwarden serve` on a free loopback port in front of
// the workspace's filesystem server (as "fs"), with the workspace's
// policy and audit log and extra config, and returns its URL. Its home is
// the workspace's, so it reads and writes nothing of the user's.
func (w *workspace) startServe(t *testing.T, extra string) string {
	t.Helper()
	policy, err := os.ReadFile(w.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(filepath.Dir(w.config), "serve.toml")
	writeFile(t, cfg, fmt.Sprintf("%s\n[mcp_servers.fs]\ncommand = %q\nargs = [%q]\n%s", policy, w.fsServer, w.project, extra))
	lg := &testkit.Buffer{}
	cmd := exec.Command(filepath.Join(binDir, "toolwarden"), "serve", "--listen", "127.0.0.1:0", "--config", cfg, "--audit", w.audit)
	cmd.Env = []string{
		"HOME=" + w.home,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(w.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(w.home, ".local", "state"),
		"TOOLWARDEN_CATALOG=" + filepath.Join(w.home, ".cache", "toolwarden", "catalog"),
	}
	cmd.Stderr = lg
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("toolwarden serve stderr:\n%s", lg.String())
		}
	})
	deadline := time.After(60 * time.Second)
	for {
		if m := serveListening.FindStringSubmatch(lg.String()); m != nil {
			waitReady(t, m[1])
			return m[1]
		}
		select {
		case <-exited:
			t.Fatalf("toolwarden serve exited before it listened:\n%s", lg.String())
		case <-deadline:
			t.Fatalf("toolwarden serve did not say where it listens within 60 s:\n%s", lg.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitReady waits until serve at url answers /readyz with 200 (every
// upstream started): serve accepts connections before its upstreams are
// up, and Claude Code lists tools once, when it connects.
func waitReady(t *testing.T, url string) {
	t.Helper()
	readyz := strings.TrimSuffix(url, "/mcp") + "/readyz"
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(readyz)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve's %s did not answer 200 within 60 s (last: %v)", readyz, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The turns of the conversation through serve.
const (
	serveTurnRead   = iota // read token.txt: allowed
	serveTurnDenied        // write under secret/: denied by argguard
	serveTurnAsked         // write asked.txt: asked, and no one can answer in -p
	serveTurnEnd
)

// Claude Code 2.1.197 in -p mode, pointed by URL at `toolwarden serve`
// with a bearer token (an "http" MCP server with an Authorization header
// in its user config, as `claude mcp add --transport http --header`
// writes it), which runs the real filesystem server:
// the model is offered what serve lists, its calls are decided by serve,
// and serve's audit log holds each decision.
func TestClaudeCodeThroughServeByURL(t *testing.T) {
	w := newWorkspace(t)
	bearer := fmt.Sprintf("tw-claude-%d", time.Now().UnixNano())
	tokens := identitytest.WriteTokens(t, t.TempDir(), map[string]identity.Principal{bearer: {Name: "claude-ci", Groups: []string{"agents"}}})
	url := w.startServe(t, fmt.Sprintf("\n[serve.auth]\ntokens_file = %q\n", tokens))
	tool := func(name string) string { return "mcp__tw__fs__" + name }
	m := newModel(t,
		calls(toolCall{tool("read_text_file"), map[string]any{"path": filepath.Join(w.project, "token.txt")}}),
		calls(toolCall{tool("write_file"), map[string]any{"path": w.deniedPath(), "content": "stolen"}}),
		calls(toolCall{tool("write_file"), map[string]any{"path": w.askedPath(), "content": "unapproved"}}),
		step{Text: "scripted conversation finished"},
	)
	w.userMCPServers(t, map[string]any{"tw": map[string]any{"type": "http", "url": url, "headers": map[string]any{"Authorization": "Bearer " + bearer}}})
	w.runClaude(t, m, "--allowedTools", "mcp__tw")

	t.Run("the model is offered serve's tools as server__tool, the hidden one left out", func(t *testing.T) {
		offered := m.toolsOffered(t)
		for _, want := range []string{tool("read_text_file"), tool("write_file")} {
			if !slices.Contains(offered, want) {
				t.Errorf("%s not offered; offered: %v", want, offered)
			}
		}
		if slices.Contains(offered, tool("move_file")) {
			t.Errorf("the hidden move_file was offered: %v", offered)
		}
	})
	t.Run("an allowed read through serve returns the file to the model", func(t *testing.T) {
		got, isErr := m.toolResult(t, serveTurnRead, 0)
		if isErr || !strings.Contains(got, w.token) {
			t.Errorf("the read's result (is_error %v) lacks the file's token %q:\n%s", isErr, w.token, got)
		}
	})
	t.Run("a denied write does not run and the model is told the rule", func(t *testing.T) {
		mustNotExist(t, w.deniedPath(), "the write argguard denies ran")
		got, isErr := m.toolResult(t, serveTurnDenied, 0)
		if !isErr {
			t.Errorf("the denied call's result is not an error")
		}
		mustSay(t, "denied write", got, "secret/ is off limits to agents", "argguard")
	})
	t.Run("an ask reaches Claude Code as an elicitation on serve's stream and, cancelled by -p, does not run", func(t *testing.T) {
		mustNotExist(t, w.askedPath(), "the asked write ran without an approval")
		got, isErr := m.toolResult(t, serveTurnAsked, 0)
		if !isErr {
			t.Errorf("the asked call's result is not an error")
		}
		// "cancel" is Claude Code's answer to the elicitation serve sent:
		// the prompt crossed HTTP both ways.
		mustSay(t, "asked write", got, "write_file", `elicitation action "cancel"`, "to allow")
		mustSayNoOneSaw(t, "asked write", got)
	})
	t.Run("serve's audit log holds each decision, made for the token's principal", func(t *testing.T) {
		want := []string{"claude-ci read_text_file allow", "claude-ci write_file deny", "claude-ci write_file ask"}
		if got := serveChecks(t, w.audit); !slices.Equal(got, want) {
			t.Errorf("serve's checks %v, want %v", got, want)
		}
	})
	t.Run("Claude Code reaches nothing but the scripted model and serve", func(t *testing.T) {
		mustReachOnlyTheModel(t, m)
	})
}

// serveChecks are the check records of serve's audit log, as "<principal>
// <tool> <verdict>", in order; serve's audit session is
// "<principal>/s/<session id>".
func serveChecks(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("serve's audit log: %v", err)
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			Event    string `json:"event"`
			Session  string `json:"session"`
			Decision struct {
				Tool    string `json:"tool"`
				Verdict string `json:"decision"`
			} `json:"decision"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit log line is not JSON (%v): %s", err, line)
		}
		if rec.Event == "check" {
			principal, _, _ := strings.Cut(rec.Session, "/")
			out = append(out, principal+" "+rec.Decision.Tool+" "+rec.Decision.Verdict)
		}
	}
	return out
}
