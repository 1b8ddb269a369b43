package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

// serve's operations through the real binary: probes, bounded requests
// and slow clients, per-principal rate limits, graceful shutdown on
// SIGTERM, live config changes, and the refusal to listen beyond loopback
// without authentication.

// opsListening is the line serve prints once it accepts connections.
var opsListening = regexp.MustCompile(`toolwarden serve: listening on (http://\S+/mcp)`)

// opsServe is a `toolwarden serve` whose exit the test watches.
type opsServe struct {
	url    string // http://127.0.0.1:PORT/mcp
	base   string // http://127.0.0.1:PORT
	audit  string // its audit log
	log    *testkit.Buffer
	cmd    *exec.Cmd
	exited chan struct{}
	err    error // of Wait, once exited is closed
}

// opsStartServe runs serve with args (a --listen among them, or
// 127.0.0.1:0) and waits until /readyz says every upstream started.
func opsStartServe(t *testing.T, args ...string) *opsServe {
	t.Helper()
	s := opsListen(t, args...)
	probe := strings.Replace(s.base, "0.0.0.0", "127.0.0.1", 1) + "/readyz"
	eventually(t, 30*time.Second, "/readyz to answer 200", func() bool {
		code, _ := opsGet(t, probe)
		return code == http.StatusOK
	})
	return s
}

// opsListen runs serve with args and waits for its listening line.
func opsListen(t *testing.T, args ...string) *opsServe {
	t.Helper()
	s := opsLaunch(t, args...)
	s.waitListening(t)
	return s
}

// opsLaunch starts serve with args (a private approvals file and audit
// log, and 127.0.0.1:0 unless args name a --listen) and returns at once.
func opsLaunch(t *testing.T, args ...string) *opsServe {
	t.Helper()
	return launchServe(t, twBin, nil, serveTestFlags(t, args)...)
}

// serveTestFlags are args with a private approvals file and audit log,
// and --listen 127.0.0.1:0 unless args name one.
func serveTestFlags(t testing.TB, args []string) []string {
	dir := t.TempDir()
	all := []string{"--approvals", filepath.Join(dir, "approvals.json"), "--audit", filepath.Join(dir, "audit.jsonl")}
	if !contains(args, "--listen") {
		all = append(all, "--listen", "127.0.0.1:0")
	}
	return append(all, args...)
}

// launchServe starts bin's serve with args and env and returns at once;
// the process is killed when the test ends.
func launchServe(t testing.TB, bin string, env []string, args ...string) *opsServe {
	t.Helper()
	s := &opsServe{log: newLog(t, "toolwarden serve"), exited: make(chan struct{})}
	for i, a := range args {
		if a == "--audit" && i+1 < len(args) {
			s.audit = args[i+1]
		}
	}
	s.cmd = exec.Command(bin, append([]string{"serve"}, args...)...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		<-s.exited
	})
	return s
}

// waitListening waits for serve's one listening line and reads its URL
// from it; serve exiting first fails the test.
func (s *opsServe) waitListening(t testing.TB) {
	t.Helper()
	eventually(t, 30*time.Second, "serve's listening line", func() bool {
		select {
		case <-s.exited:
			t.Fatalf("serve exited before it listened (%v):\n%s", s.err, s.log.String())
		default:
		}
		m := opsListening.FindStringSubmatch(s.log.String())
		if m != nil {
			s.url = m[1]
			s.base = strings.TrimSuffix(m[1], "/mcp")
		}
		return m != nil
	})
}

// waitExit waits up to limit for serve to exit and returns its status.
func (s *opsServe) waitExit(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-s.exited:
	case <-time.After(limit):
		t.Fatalf("serve did not exit within %s:\n%s", limit, s.log.String())
	}
	var ee *exec.ExitError
	if errors.As(s.err, &ee) {
		return ee.ExitCode()
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return 0
}

// awaitChecked waits until serve's audit log has a check record of tool:
// the call got past policy and is on its way upstream.
func (s *opsServe) awaitChecked(t *testing.T, tool string) {
	t.Helper()
	eventually(t, 20*time.Second, "the check record of "+tool, func() bool {
		b, _ := os.ReadFile(s.audit)
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, `"event":"check"`) && strings.Contains(line, `"`+tool+`"`) {
				return true
			}
		}
		return false
	})
}

// opsTestserver is a config serving internal/testserver over stdio as
// "t", plus extra.
func opsTestserver(t *testing.T, extra string) string {
	t.Helper()
	return writeFile(t, "serve.toml", fmt.Sprintf("[mcp_servers.t]\ncommand = %q\n%s", testServer, extra))
}

// opsTokens writes a tokens file with one token per principal
// ("tok-<name>") and returns its path.
func opsTokens(t *testing.T, names ...string) string {
	t.Helper()
	toks := map[string]identity.Principal{}
	for _, n := range names {
		toks["tok-"+n] = identity.Principal{Name: n}
	}
	return identitytest.WriteTokens(t, t.TempDir(), toks)
}

// opsPost sends one raw JSON-RPC message to serve's endpoint.
func opsPost(t *testing.T, c *http.Client, url, token, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func opsRPCError(t *testing.T, body string) (id string, code int, msg string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage
		Error struct {
			Code    int
			Message string
		}
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not a JSON-RPC error: %q", body)
	}
	return string(m.ID), m.Error.Code, m.Error.Message
}

func opsGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServeProbesAnswerWithoutATokenAndNameOnlyTheUpstreamsNotReady(t *testing.T) {
	t.Parallel()
	// "broken" cannot start; its command line carries a secret the probe
	// must not repeat.
	cfg := opsTestserver(t, fmt.Sprintf(`
[mcp_servers.broken]
command = "/nonexistent/toolwarden-e2e-server"
args = ["--api-key=hunter2-secret"]

[serve.auth]
tokens_file = %q
`, opsTokens(t, "alice")))
	s := opsListen(t, "--config", cfg)
	if code, body := opsGet(t, s.base+"/healthz"); code != 200 || body != "ok" {
		t.Errorf("/healthz: %d %q, want 200 \"ok\"", code, body)
	}
	var code int
	var body string
	eventually(t, 20*time.Second, "/readyz to settle on the broken upstream", func() bool {
		code, body = opsGet(t, s.base+"/readyz")
		return code == 503 && strings.Contains(body, `"not_ready":["broken"]`)
	})
	for _, secret := range []string{"hunter2", "nonexistent", "/"} {
		if strings.Contains(body, secret) {
			t.Errorf("/readyz says %q: %s", secret, body)
		}
	}
	// /mcp, behind the same listener, still wants a token.
	if code, _, _ := opsPost(t, http.DefaultClient, s.url, "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != http.StatusUnauthorized {
		t.Errorf("/mcp without a token: %d, want 401", code)
	}

	healthy := opsStartServe(t, "--config", opsTestserver(t, ""))
	eventually(t, 20*time.Second, "/readyz 200 once the testserver started", func() bool {
		code, body = opsGet(t, healthy.base+"/readyz")
		return code == 200
	})
	if body != "{\"ready\":true}\n" {
		t.Errorf("/readyz when ready: %q", body)
	}
}

func TestServeRefusesAnOversizedBodyWith413NamingTheKey(t *testing.T) {
	t.Parallel()
	s := opsStartServe(t, "--config", opsTestserver(t, "[serve]\nmax_request_kib = 4\n"))
	big := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t__echo","arguments":{"message":%q}}}`, strings.Repeat("x", 8<<10))
	code, _, body := opsPost(t, http.DefaultClient, s.url, "", big)
	if code != http.StatusRequestEntityTooLarge {
		t.Fatalf("an 8 KiB call under a 4 KiB limit: %d %s, want 413", code, body)
	}
	if _, _, msg := opsRPCError(t, body); !strings.Contains(msg, "4 KiB") || !strings.Contains(msg, "max_request_kib") {
		t.Errorf("the 413 does not say the limit and the key: %q", msg)
	}
	// A call under the limit goes through, on a session of the real client.
	c := coreClient(t, s.url, mcp.ProtocolVersion20251125, nil, nil)
	if out, isErr := c.call(t, "t__echo", map[string]any{"message": strings.Repeat("y", 2<<10)}); isErr || !strings.Contains(out, "yyyy") {
		t.Errorf("a 2 KiB call: %q (error %v)", out, isErr)
	}
}

func TestServeCutsOffADribblingClientWhileServingOthers(t *testing.T) {
	t.Parallel()
	s := opsStartServe(t, "--config", opsTestserver(t, ""), "--read-timeout", "2s")
	c := coreClient(t, s.url, mcp.ProtocolVersion20251125, nil, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t__echo","arguments":{"message":"slow"}}}`
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n", len(body))
	start := time.Now()
	go func() { // a byte a second
		for i := 0; i < len(body); i++ {
			time.Sleep(time.Second)
			if _, err := conn.Write([]byte{body[i]}); err != nil {
				return
			}
		}
	}()
	var worst time.Duration
	for i := range 5 {
		t0 := time.Now()
		if out, isErr := c.call(t, "t__echo", map[string]any{"message": fmt.Sprintf("beside %d", i)}); isErr || !strings.Contains(out, "beside") {
			t.Fatalf("a call beside the slow client: %q (error %v)", out, isErr)
		}
		worst = max(worst, time.Since(t0))
		time.Sleep(200 * time.Millisecond)
	}
	_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	reply, _ := io.ReadAll(conn) // until serve closes the connection
	took := time.Since(start)
	if !strings.HasPrefix(string(reply), "HTTP/1.1 408") || !strings.Contains(string(reply), "did not arrive within 2s") {
		t.Fatalf("the dribbling client got %q, want a 408 that says why", reply)
	}
	if took > 6*time.Second {
		t.Errorf("cut off after %s; the read timeout is 2 s", took)
	}
	if worst > 2*time.Second {
		t.Errorf("the slowest call beside the dribbling client took %s", worst)
	}
}

// slowApprover answers every ask with answer after delay, as a human
// who takes their time.
type slowApprover struct {
	delay  time.Duration
	answer string
	asked  atomic.Int32
}

func (a *slowApprover) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.asked.Add(1)
	select {
	case <-time.After(a.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"decision": a.answer},
	}}, nil
}

func TestServeKeepsACallOpenWhileItWaitsForApprovalPastEveryTimeout(t *testing.T) {
	t.Parallel()
	// The human takes 4 s; serve's read timeout is 1 s and its idle
	// timeout does not apply to a connection in use.
	s := opsStartServe(t, "--config", opsTestserver(t, "[apps.t.tools.echo]\napproval_mode = \"prompt\"\n"), "--read-timeout", "1s")
	human := &slowApprover{delay: 4 * time.Second, answer: "allow_once"}
	c := opsClient(t, s.url, human)
	t0 := time.Now()
	out, isErr := c.call(t, "t__echo", map[string]any{"message": "worth the wait"})
	if isErr || !strings.Contains(out, "worth the wait") {
		t.Fatalf("the approved call: %q (error %v)", out, isErr)
	}
	if human.asked.Load() != 1 || time.Since(t0) < 4*time.Second {
		t.Errorf("asked %d times, answered after %s; want one ask answered after 4 s", human.asked.Load(), time.Since(t0))
	}
}

// opsClient is mcp-go's streamable HTTP client on a 2025-11-25 session
// with serve, answering asks with h.
func opsClient(t *testing.T, url string, h client.ElicitationHandler) *goClient {
	t.Helper()
	return legacyElicitingClient(t, url, "e2e-ops", 60*time.Second, nil, h)
}

// legacyElicitingClient is mcp-go's streamable HTTP client named name on
// a 2025-11-25 session at url, sending header with every request (nil:
// none), each request given timeout, answering asks with h.
func legacyElicitingClient(t *testing.T, url, name string, timeout time.Duration, header map[string]string, h client.ElicitationHandler) *goClient {
	t.Helper()
	opts := []transport.StreamableHTTPCOption{transport.WithHTTPTimeout(timeout)}
	if header != nil {
		opts = append(opts, transport.WithHTTPHeaders(header))
	}
	tr, err := transport.NewStreamableHTTP(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.ProtocolVersion20251125), client.WithElicitationHandler(h))
	ctx := testContext(t)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ClientInfo: mcp.Implementation{Name: name, Version: "1"}}}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return &goClient{Client: c, notes: make(chan mcp.JSONRPCNotification, 64), log: &testkit.Buffer{}}
}

func TestServeRateLimitsEachPrincipalOnItsOwn(t *testing.T) {
	t.Parallel()
	cfg := opsTestserver(t, fmt.Sprintf(`
[serve.rate_limit]
calls_per_second = 2
burst = 10

[serve.auth]
tokens_file = %q
`, opsTokens(t, "alice", "bob")))
	s := opsStartServe(t, "--config", cfg)
	bob := coreClient(t, s.url, mcp.ProtocolVersion20251125, nil, map[string]string{"Authorization": "Bearer tok-bob"})
	// Alice floods.
	var refused, other atomic.Int32
	var sample struct {
		sync.Mutex
		retry, body string
	}
	var wg sync.WaitGroup
	for i := range 60 {
		wg.Go(func() {
			code, h, body := opsPost(t, http.DefaultClient, s.url, "tok-alice", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i))
			if code != http.StatusTooManyRequests {
				other.Add(1)
				return
			}
			refused.Add(1)
			sample.Lock()
			sample.retry, sample.body = h.Get("Retry-After"), body
			sample.Unlock()
		})
	}
	wg.Wait()
	if n := refused.Load(); n < 45 {
		t.Fatalf("alice's flood of 60 requests: %d refused, want at least 50 (burst 10)", n)
	}
	if r, err := strconv.Atoi(sample.retry); err != nil || r < 1 {
		t.Errorf("Retry-After %q, want whole seconds", sample.retry)
	}
	if _, code, msg := opsRPCError(t, sample.body); code == 0 || !strings.Contains(msg, `"alice"`) || !strings.Contains(msg, "[serve.rate_limit]") {
		t.Errorf("the 429's JSON-RPC error: %d %q", code, msg)
	}
	// Bob, right after, is not slowed by alice's flood.
	for i := range 5 {
		t0 := time.Now()
		if out, isErr := bob.call(t, "t__echo", map[string]any{"message": "bob " + strconv.Itoa(i)}); isErr || !strings.Contains(out, "bob") {
			t.Fatalf("bob's call %d during alice's flood: %q (error %v)", i, out, isErr)
		}
		if d := time.Since(t0); d > 2*time.Second {
			t.Errorf("bob's call %d took %s", i, d)
		}
	}
}

func TestServeOnSIGTERMFinishesTheCallInFlightAndRefusesNewConnections(t *testing.T) {
	t.Parallel()
	s := opsStartServe(t, "--config", opsTestserver(t, ""), "--shutdown-grace", "20s")
	c := coreClient(t, s.url, mcp.ProtocolVersion20251125, nil, nil)
	type answer struct {
		out   string
		isErr bool
	}
	done := make(chan answer, 1)
	go func() {
		out, isErr := c.call(t, "t__slow", map[string]any{"ms": 3000})
		done <- answer{out, isErr}
	}()
	s.awaitChecked(t, "slow") // the call is in flight upstream
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	logged(t, s.log, "shutting down")
	if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(s.base, "http://"), time.Second); err == nil {
		conn.Close()
		t.Error("a new connection was accepted after SIGTERM")
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a new connection after SIGTERM: %v, want refused", err)
	}
	a := <-done
	if a.isErr || !strings.Contains(a.out, "slept") {
		t.Fatalf("the call in flight at SIGTERM: %q (error %v), want its result", a.out, a.isErr)
	}
	if code := s.waitExit(t, 15*time.Second); code != 0 {
		t.Errorf("serve exited %d after a graceful shutdown:\n%s", code, s.log.String())
	}
	mustContain(t, s.log.String(), "toolwarden serve: stopped")
}

func TestServeCancelsTheCallsLeftAfterTheGracePeriodWithAClearError(t *testing.T) {
	t.Parallel()
	s := opsStartServe(t, "--config", opsTestserver(t, ""), "--shutdown-grace", "1s")
	c := coreClient(t, s.url, mcp.ProtocolVersion20251125, nil, nil)
	done := make(chan string, 1)
	go func() {
		out, _ := c.call(t, "t__slow", map[string]any{"ms": 60000})
		done <- out
	}()
	s.awaitChecked(t, "slow")
	t0 := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	out := <-done
	if !strings.Contains(out, "shutdown grace period") {
		t.Errorf("the cancelled call's answer does not say why: %q", out)
	}
	if code := s.waitExit(t, 15*time.Second); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, s.log.String())
	}
	if took := time.Since(t0); took > 8*time.Second {
		t.Errorf("shutdown took %s with a 1 s grace period", took)
	}
}

func TestServeAppliesAConfigEditToTheNextCallOfTheSameSessionAndRefusesABrokenOne(t *testing.T) {
	t.Parallel()
	cfg := opsTestserver(t, "")
	s := opsStartServe(t, "--config", cfg)
	c := coreClient(t, s.url, mcp.ProtocolVersion20251125, nil, nil)
	echo := func(msg string) (string, bool) { return c.call(t, "t__echo", map[string]any{"message": msg}) }
	if out, isErr := echo("before"); isErr {
		t.Fatalf("echo before any edit: %q", out)
	}
	original, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(content string) {
		tmp := cfg + ".tmp"
		if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, cfg); err != nil { // as editors save
			t.Fatal(err)
		}
	}
	// A broken edit is refused, said so, and the running config serves on.
	edit(string(original) + "\n[apps.t.tools.echo]\napproval_mode = \"sometimes\"\n")
	logged(t, s.log, "config change refused")
	mustContain(t, s.log.String(), "sometimes")
	if out, isErr := echo("after the broken edit"); isErr || !strings.Contains(out, "after the broken edit") {
		t.Fatalf("echo after a refused edit: %q (error %v)", out, isErr)
	}
	// A good edit applies to the next call of the same session.
	edit(string(original) + "\n[apps.t.tools.echo]\nenabled = false\n")
	var out string
	var isErr bool
	eventually(t, 10*time.Second, "the edit that turns echo off to apply", func() bool {
		out, isErr = echo("after the edit")
		return isErr
	})
	if strings.Contains(out, "after the edit\n") || !strings.Contains(out, "t__echo") {
		t.Errorf("the call after the edit: %q", out)
	}
	if _, isErr := c.call(t, "t__slow", map[string]any{"ms": 1}); isErr {
		t.Error("the session was lost with the edit: another tool fails")
	}
}

func TestServeRefusesToListenBeyondLoopbackWithoutAuthentication(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		s := opsLaunch(t, "--config", opsTestserver(t, ""), "--listen", addr)
		if code := s.waitExit(t, 20*time.Second); code == 0 {
			t.Errorf("--listen %s without auth: exit 0", addr)
		}
		log := s.log.String()
		if opsListening.MatchString(log) {
			t.Errorf("--listen %s without auth listened:\n%s", addr, log)
		}
		if !strings.Contains(log, "refusing to listen") || !strings.Contains(log, "[serve.auth]") {
			t.Errorf("--listen %s: the refusal does not say why and what to do:\n%s", addr, log)
		}
	}
	// With tokens, the same address is served.
	s := opsStartServe(t, "--config", opsTestserver(t, fmt.Sprintf("[serve.auth]\ntokens_file = %q\n", opsTokens(t, "alice"))), "--listen", "0.0.0.0:0")
	if code, _ := opsGet(t, strings.Replace(s.base, "0.0.0.0", "127.0.0.1", 1)+"/healthz"); code != 200 {
		t.Errorf("/healthz of serve on 0.0.0.0 with auth: %d", code)
	}
}

func TestServeCancelsTheCallsAtOnceOnASecondSignal(t *testing.T) {
	t.Parallel()
	s := opsStartServe(t, "--config", opsTestserver(t, ""), "--shutdown-grace", "60s")
	c := coreClient(t, s.url, mcp.ProtocolVersion20251125, nil, nil)
	done := make(chan string, 1)
	go func() {
		out, _ := c.call(t, "t__slow", map[string]any{"ms": 60000})
		done <- out
	}()
	s.awaitChecked(t, "slow")
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	logged(t, s.log, "shutting down")
	t0 := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if out := <-done; !strings.Contains(out, "shutdown grace period") {
		t.Errorf("the call cut by the second signal: %q", out)
	}
	if code := s.waitExit(t, 20*time.Second); code != 0 {
		t.Errorf("serve exited %d:\n%s", code, s.log.String())
	}
	if took := time.Since(t0); took > 8*time.Second {
		t.Errorf("serve took %s to stop after the second signal (grace 60 s)", took)
	}
}
