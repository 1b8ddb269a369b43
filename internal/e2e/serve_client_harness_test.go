package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

// serveAudit is one record of serve's audit log.
type serveAudit struct {
	Event    string
	Session  string // "<principal>/s/<session id>" under the 2025-era protocols
	Decision struct {
		Tool    string
		Verdict string `json:"decision"`
	}
}

// serveAuditLog is every record of the audit log of s, in order.
func serveAuditLog(t *testing.T, s *coreServe) []serveAudit {
	t.Helper()
	b, err := os.ReadFile(s.audit)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []serveAudit
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var r serveAudit
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("serve's audit log has a line that is not JSON (%v): %s", err, line)
		}
		out = append(out, r)
	}
	return out
}

// serveAuditRecords are the audit records of s of event ("check",
// "observe"), as "<tool> <verdict>" (verdict empty when the record has
// none).
func serveAuditRecords(t *testing.T, s *coreServe, event string) []string {
	t.Helper()
	var out []string
	for _, r := range serveAuditLog(t, s) {
		if r.Event == event {
			out = append(out, strings.TrimSpace(r.Decision.Tool+" "+r.Decision.Verdict))
		}
	}
	return out
}

// serveWorld is serve in front of the real server-filesystem (stdio, as
// "fs") and the real server-everything (streamable HTTP, as "every"),
// with one decision of each kind: move_file hidden, reads under secret/
// denied by argguard, write_file asked (the default for a tool that says
// it is destructive, so an approval may be remembered for the session),
// the read-only tools allowed.
type serveWorld struct {
	dir    string // the folder server-filesystem serves
	secret string // the unique content of token.txt
	bearer string // the one token of serve's tokens file (principal "alice")
	front  *coreServe
}

// serveDenyReason is the reason of the argguard rule: a denied call's text
// must name it.
const serveDenyReason = "secret/ is off limits to the team's agents"

// newServeWorld starts the upstreams and serve, which takes bearer tokens
// from a tokens file that knows one, w.bearer.
func newServeWorld(t *testing.T) *serveWorld {
	t.Helper()
	fsBin := npmServer(t, "mcp-server-filesystem")
	every := coreEverythingHTTP(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := &serveWorld{dir: dir, secret: fmt.Sprintf("secret-%d", time.Now().UnixNano()), bearer: fmt.Sprintf("tw-alice-%d", time.Now().UnixNano())}
	tokens := identitytest.WriteTokens(t, t.TempDir(), map[string]identity.Principal{w.bearer: {Name: "alice", Groups: []string{"dev"}}})
	if err := os.MkdirAll(filepath.Join(dir, "secret"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"token.txt": w.secret, "secret/key.txt": "never to be read through serve"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := writeFile(t, "serve.toml", fmt.Sprintf(`
[mcp_servers.fs]
command = %q
args = [%q]

[mcp_servers.every]
url = %q

[apps.fs.tools.move_file]
enabled = false

[policies.argguard]
builtin = "argguard"
[policies.argguard.config]
rules = [{ tool = "read_text_file", arg = "path", deny_glob = %q, reason = %q }]

[serve.auth]
tokens_file = %q
`, fsBin, dir, every, filepath.Join(dir, "secret", "**"), serveDenyReason, tokens))
	w.front = coreStartServe(t, nil, "--config", cfg)
	serveReady(t, w.front.url)
	return w
}

// serveReady waits until serve at url says it is ready (/readyz 200: every
// upstream started), as a load balancer would before sending it clients:
// serve accepts connections before its upstreams are up, and lists their
// tools only once they are.
func serveReady(t *testing.T, url string) {
	t.Helper()
	readyz := strings.TrimSuffix(url, "/mcp") + "/readyz"
	eventually(t, 60*time.Second, "serve's /readyz to answer 200", func() bool {
		resp, err := http.Get(readyz)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

func (w *serveWorld) path(name string) string { return filepath.Join(w.dir, name) }

// serveTSResult is what serve-client.mjs printed.
type serveTSResult struct {
	Connected bool `json:"connected"`
	Error     *struct {
		Code    any    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	SessionID       string `json:"sessionId"`
	ProtocolVersion string `json:"protocolVersion"`
	Results         []struct {
		Op      string   `json:"op"`
		Name    string   `json:"name"`
		Tools   []string `json:"tools"`
		IsError bool     `json:"isError"`
		Text    string   `json:"text"`
		Thrown  string   `json:"thrown"`
	} `json:"results"`
	Asked []struct {
		Message string `json:"message"`
	} `json:"asked"`
}

// runServeTS runs testdata/serve-client.mjs, the official TypeScript SDK's
// streamable HTTP client, against url with token (none when empty),
// answering elicitations with answers when elicitation is set.
func runServeTS(t *testing.T, url, token string, elicitation bool, answers []string, steps ...tsStep) serveTSResult {
	t.Helper()
	script, _ := json.Marshal(map[string]any{"url": url, "token": token, "elicitation": elicitation, "answers": answers, "steps": steps})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(root, "internal", "e2e", "testdata", "serve-client.mjs"), string(script))
	cmd.Env = append(os.Environ(), "MCP_SDK="+nodeSDK(t))
	errb := newLog(t, "serve-client.mjs")
	cmd.Stderr = errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("serve-client.mjs: %v\nstdout: %s", err, out)
	}
	var res serveTSResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("serve-client.mjs printed no result (%v):\n%s", err, out)
	}
	return res
}

// runInspector runs the MCP Inspector's CLI against url over streamable
// HTTP with args (--method ...) and, when token is set, the bearer
// header; it returns what it printed and whether it exited 0.
func runInspector(t *testing.T, url, token string, args ...string) (stdout string, ok bool) {
	t.Helper()
	bin := testkit.NPMBin(t, "mcp-inspector")
	all := []string{"--cli", url, "--transport", "http"}
	if token != "" {
		all = append(all, "--header", "Authorization: Bearer "+token)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(all, args...)...)
	// The Inspector keeps a catalog under HOME; the suite's HOME is its own.
	errb := newLog(t, "mcp-inspector")
	cmd.Stderr = errb
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("the Inspector CLI did not finish within 90 s: %s", out)
	}
	return string(out), err == nil
}
