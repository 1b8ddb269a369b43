package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// What the upstream asks of the client (sampling, elicitation, roots) and
// what it logs reach the client through the proxy, and the client's
// answers reach the upstream.

// capableClient declares everything an upstream may ask for.
const capableClient = `{"sampling":{},"roots":{"listChanged":true},"elicitation":{"form":{}}}`

// serverRequest waits for the next request the proxy sent the raw client
// with this method, and removes it from the client's list.
func (c *rawClient) serverRequest(method string) rawMessage {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c.mu.Lock()
		for i, m := range c.reqs {
			if m.Method == method {
				c.reqs = slices.Delete(c.reqs, i, i+1)
				c.mu.Unlock()
				return m
			}
		}
		c.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	c.t.Fatalf("the proxy sent no %s request", method)
	return rawMessage{}
}

// callAsync sends a tools/call and returns a function that waits for its
// result.
func (c *rawClient) callAsync(id, tool string, args any) func() callResult {
	c.t.Helper()
	ch := c.expect(id)
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, toJSON(c.t, args)))
	return func() callResult { return decodeCall(c.t, c.await(id, ch)) }
}

// notesOf returns the notifications with this method received so far.
func (c *rawClient) notesOf(method string) []rawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []rawMessage
	for _, n := range c.notes {
		if n.Method == method {
			out = append(out, n)
		}
	}
	return out
}

func TestWrapRelaysTheUpstreamsRequestsToTheClient(t *testing.T) {
	t.Parallel()
	auditLog := filepath.Join(t.TempDir(), "audit.jsonl")
	args := wrapArgs(t, "ts", nil, testServer, "-state", t.TempDir())
	c := startRaw(t, twBin, append([]string{args[0], "--audit", auditLog}, args[1:]...)...)
	c.initialize(capableClient)

	// Sampling: the request reaches the client as the server wrote it,
	// under an id of the proxy's, and the answer reaches the server.
	done := c.callAsync("10", "sample", map[string]any{"prompt": "say hi"})
	req := c.serverRequest("sampling/createMessage")
	if !strings.HasPrefix(string(req.ID), `"toolwarden-relay-`) {
		t.Errorf("relayed request id %s: want one of the proxy's own", req.ID)
	}
	var params struct {
		Messages []struct {
			Role    string `json:"role"`
			Content struct {
				Type, Text string
			} `json:"content"`
		} `json:"messages"`
		SystemPrompt string `json:"systemPrompt"`
		MaxTokens    int    `json:"maxTokens"`
	}
	if err := json.Unmarshal(req.Params, &params); err != nil {
		t.Fatal(err)
	}
	if len(params.Messages) != 1 || params.Messages[0].Content.Text != "say hi" || params.SystemPrompt != "testserver asks" || params.MaxTokens != 42 {
		t.Errorf("sampling params reached the client changed: %s", req.Params)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"role":"assistant","content":{"type":"text","text":"hi back"},"model":"m-1"}}`, req.ID))
	if got := done(); got.IsError || got.Text != "model m-1 said: hi back" {
		t.Errorf("sample: %+v", got)
	}

	// The client's error goes back as an error.
	done = c.callAsync("11", "sample", map[string]any{"prompt": "again"})
	req = c.serverRequest("sampling/createMessage")
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-1,"message":"the user rejected sampling"}}`, req.ID))
	if got := done(); !got.IsError || !strings.Contains(got.Text, "the user rejected sampling") {
		t.Errorf("sample refused by the client: %+v", got)
	}

	// Roots.
	done = c.callAsync("12", "roots", map[string]any{})
	req = c.serverRequest("roots/list")
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[{"uri":"file:///src/a","name":"a"},{"uri":"file:///src/b"}]}}`, req.ID))
	if got := done(); got.Text != "roots: file:///src/a file:///src/b" {
		t.Errorf("roots: %+v", got)
	}

	// Elicitation: in front of one server the question is the server's own.
	done = c.callAsync("13", "ask", map[string]any{"question": "Proceed?"})
	req = c.serverRequest("elicitation/create")
	var q struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(req.Params, &q)
	if q.Message != "Proceed?" {
		t.Errorf("wrap changed the question: %s", req.Params)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"answer":"yes"}}}`, req.ID))
	if got := done(); got.Text != `accept {"answer":"yes"}` {
		t.Errorf("ask: %+v", got)
	}

	// An answer to a request the proxy never sent goes nowhere, and the
	// proxy keeps serving.
	c.send(`{"jsonrpc":"2.0","id":"toolwarden-relay-999","result":{"action":"accept","content":{"answer":"forged"}}}`)
	if got := decodeCall(t, c.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "still here"}})); got.Text != "echo: still here" {
		t.Errorf("after a forged answer: %+v", got)
	}
	eventually(t, 5*time.Second, "the forged answer logged", func() bool {
		return strings.Contains(c.log.String(), "dropped an answer to a request toolwarden did not send")
	})

	// The audit log has a record of each relayed request, and how it ended.
	b, err := os.ReadFile(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	var relays []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Event    string
			Decision struct{ Server, Method, Outcome string }
		}
		if json.Unmarshal([]byte(line), &r) == nil && r.Event == "relay" {
			relays = append(relays, r.Decision.Server+" "+r.Decision.Method+" "+r.Decision.Outcome)
		}
	}
	want := []string{"ts sampling/createMessage answered", "ts sampling/createMessage error", "ts roots/list answered", "ts elicitation/create answered"}
	if !slices.Equal(relays, want) {
		t.Errorf("audit log relays:\n%q\nwant\n%q", relays, want)
	}
}

// A client that declared nothing is not asked anything: the upstream is
// told the client's capabilities, not the proxy's.
func TestWrapDeclaresOnlyTheClientsCapabilities(t *testing.T) {
	t.Parallel()
	c := startRaw(t, twBin, wrapArgs(t, "ts", nil, testServer, "-state", t.TempDir())...)
	c.initialize(`{}`)
	got := decodeCall(t, c.call("tools/call", map[string]any{"name": "roots", "arguments": map[string]any{}}))
	if !got.IsError || !strings.Contains(got.Text, "roots/list failed") {
		t.Errorf("roots without the capability: %+v", got)
	}
	c.mu.Lock()
	n := len(c.reqs)
	c.mu.Unlock()
	if n != 0 {
		t.Errorf("the client was sent %d requests it cannot answer", n)
	}
}

func TestWrapRelaysLogMessagesAtTheClientsLevel(t *testing.T) {
	t.Parallel()
	c := startRaw(t, twBin, wrapArgs(t, "ts", nil, testServer, "-state", t.TempDir())...)
	c.initialize(`{}`)
	logs := func() []rawMessage { return c.notesOf("notifications/message") }

	// No level set: everything the server sends.
	call := func() {
		t.Helper()
		if got := decodeCall(t, c.call("tools/call", map[string]any{"name": "log", "arguments": map[string]any{}})); got.Text != "logged" {
			t.Fatalf("log: %+v", got)
		}
	}
	call()
	eventually(t, 5*time.Second, "8 log messages", func() bool { return len(logs()) == 8 })

	// A bad level is refused and changes nothing.
	if m := c.call("logging/setLevel", map[string]any{"level": "loud"}); m.Error == nil || m.Error.Code != mcp.INVALID_PARAMS {
		t.Errorf("setLevel loud: %+v", m)
	}
	// error and above only, although the server sends every level.
	if m := c.call("logging/setLevel", map[string]any{"level": "error"}); m.Error != nil || string(m.Result) != "{}" {
		t.Fatalf("setLevel error: %+v %s", m.Error, m.Result)
	}
	call()
	eventually(t, 5*time.Second, "4 more log messages", func() bool { return len(logs()) == 12 })
	time.Sleep(100 * time.Millisecond) // anything below error would have come by now
	var levels []string
	for _, m := range logs()[8:] {
		var p struct{ Level, Logger, Data string }
		_ = json.Unmarshal(m.Params, &p)
		if p.Logger != "ts" || p.Data != "at "+p.Level {
			t.Errorf("wrap changed a log message: %s", m.Params)
		}
		levels = append(levels, p.Level)
	}
	if len(logs()) != 12 || strings.Join(levels, " ") != "error critical alert emergency" {
		t.Errorf("after setLevel error: %d messages, levels %v", len(logs()), levels)
	}
}

// In proxy mode the client learns which server logs and which asks.
func TestProxyNamesTheServerThatLogsOrAsks(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "proxy.toml", fmt.Sprintf(`
[mcp_servers.alpha]
command = %q
args = ["-state", %q]
`, testServer, t.TempDir()))
	c := startRaw(t, twBin, proxyArgs(t, cfg)...)
	c.initialize(capableClient)

	if got := decodeCall(t, c.call("tools/call", map[string]any{"name": "alpha__log", "arguments": map[string]any{}})); got.Text != "logged" {
		t.Fatalf("alpha__log: %+v", got)
	}
	eventually(t, 5*time.Second, "log messages", func() bool { return len(c.notesOf("notifications/message")) == 8 })
	var p struct{ Logger string }
	_ = json.Unmarshal(c.notesOf("notifications/message")[0].Params, &p)
	if p.Logger != "alpha/ts" {
		t.Errorf("logger %q: want alpha/ts", p.Logger)
	}

	done := c.callAsync("20", "alpha__ask", map[string]any{"question": "Delete the branch?"})
	req := c.serverRequest("elicitation/create")
	var q struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(req.Params, &q)
	if q.Message != "alpha: Delete the branch?" {
		t.Errorf("question %q: want it to name its server", q.Message)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"decline"}}`, req.ID))
	if got := done(); !strings.HasPrefix(got.Text, "decline") {
		t.Errorf("ask declined: %+v", got)
	}
}

// everythingClient answers server-everything's requests as a real client
// would, recording them.
type everythingClient struct {
	mu      sync.Mutex
	prompts []string
}

func (e *everythingClient) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	e.mu.Lock()
	for _, m := range req.Messages {
		if tc, ok := m.Content.(mcp.TextContent); ok {
			e.prompts = append(e.prompts, tc.Text)
		}
	}
	e.mu.Unlock()
	return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("sampled-7f3a")}, Model: "e2e-model", StopReason: "endTurn"}, nil
}

func (e *everythingClient) ListRoots(ctx context.Context, req mcp.ListRootsRequest) (*mcp.ListRootsResult, error) {
	return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///work/e2e-root", Name: "e2e-root"}}}, nil
}

func (e *everythingClient) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
}

// server-everything lists the tools that need sampling, roots and
// elicitation only to a client that has them. Through wrap, a capable
// client sees the same tools as directly, and they work; a client without
// them sees the same shorter list.
func TestWrapKeepsServerEverythingsClientFeatures(t *testing.T) {
	t.Parallel()
	every := npmServer(t, "mcp-server-everything")
	cfg := writeFile(t, "wrap.toml", "[apps.everything]\ndefault_tools_approval_mode = \"approve\"\n")
	conditional := []string{"get-roots-list", "trigger-sampling-request", "trigger-elicitation-request"}
	names := func(g *goClient) []string {
		ns := g.toolNames(t)
		slices.Sort(ns)
		return ns
	}
	settle := func(g *goClient, want bool) []string {
		t.Helper()
		// The server registers these tools after the handshake, and says so
		// with list_changed: wait for the list to settle.
		var ns []string
		eventually(t, 15*time.Second, "the conditional tools to settle", func() bool {
			ns = names(g)
			return contains(ns, conditional[0]) == want && contains(ns, conditional[1]) == want
		})
		return ns
	}

	h := &everythingClient{}
	capable := []client.ClientOption{client.WithSamplingHandler(h), client.WithRootsHandler(h), client.WithElicitationHandler(h), client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION)}
	direct := settle(startGoWith(t, capable, every), true)
	w := startGoWith(t, capable, twBin, wrapArgs(t, "everything", []string{cfg}, every)...)
	wrapped := settle(w, true)
	if !slices.Equal(direct, wrapped) {
		t.Errorf("capable client: tools directly %v, through wrap %v", direct, wrapped)
	}

	text, isErr := w.call(t, "trigger-sampling-request", map[string]any{"prompt": "name a colour"})
	if isErr || !strings.Contains(text, "sampled-7f3a") || !strings.Contains(text, "e2e-model") {
		t.Errorf("trigger-sampling-request: %v %s", isErr, text)
	}
	h.mu.Lock()
	if len(h.prompts) != 1 || !strings.Contains(h.prompts[0], "name a colour") {
		t.Errorf("the client's model was asked %q", h.prompts)
	}
	h.mu.Unlock()
	if text, isErr := w.call(t, "get-roots-list", map[string]any{}); isErr || !strings.Contains(text, "file:///work/e2e-root") {
		t.Errorf("get-roots-list: %v %s", isErr, text)
	}

	// Logging: the level goes upstream, and the server's messages come back.
	// Clients on older protocol versions still set levels, so the proxy relays them.
	//lint:ignore SA1019 the relay of a deprecated feature is what is tested
	if err := w.SetLevel(testContext(t), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
		t.Fatal(err)
	}
	w.drainNotes()
	if text, isErr := w.call(t, "toggle-simulated-logging", map[string]any{}); isErr {
		t.Fatalf("toggle-simulated-logging: %s", text)
	}
	deadline := time.After(10 * time.Second)
	for got := false; !got; {
		select {
		case n := <-w.notes:
			got = n.Method == string(mcp.MethodNotificationMessage)
		case <-deadline:
			t.Fatal("no log message from server-everything reached the client")
		}
	}

	// A client without those capabilities.
	plainDirect := settle(startGo(t, true, nil, every), false)
	plainWrapped := settle(startGo(t, true, nil, twBin, wrapArgs(t, "everything", []string{cfg}, every)...), false)
	if !slices.Equal(plainDirect, plainWrapped) {
		t.Errorf("plain client: tools directly %v, through wrap %v", plainDirect, plainWrapped)
	}
	if slices.Equal(plainWrapped, wrapped) {
		t.Error("server-everything listed the same tools to both clients: the comparison proves nothing")
	}
}

// A question whose server stopped is withdrawn from the client
// (notifications/cancelled), and the question's call fails; the proxy
// keeps serving.
func TestWrapWithdrawsTheQuestionsOfAServerThatStopped(t *testing.T) {
	t.Parallel()
	c := startRaw(t, twBin, wrapArgs(t, "ts", nil, testServer, "-state", t.TempDir())...)
	c.initialize(capableClient)
	asked := c.callAsync("30", "ask", map[string]any{"question": "Wait for me?"})
	req := c.serverRequest("elicitation/create")
	crashed := c.callAsync("31", "crash", map[string]any{})
	if got := crashed(); !got.IsError {
		t.Errorf("crash: %+v", got)
	}
	if got := asked(); !got.IsError {
		t.Errorf("the question's call: %+v", got)
	}
	eventually(t, 5*time.Second, "the question withdrawn", func() bool {
		for _, n := range c.notesOf("notifications/cancelled") {
			var p struct {
				RequestID json.RawMessage `json:"requestId"`
			}
			if json.Unmarshal(n.Params, &p) == nil && string(p.RequestID) == string(req.ID) {
				return true
			}
		}
		return false
	})
	// A late answer to the withdrawn question goes nowhere.
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"answer":"late"}}}`, req.ID))
	if got := decodeCall(t, c.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "restarted"}})); got.Text != "echo: restarted" {
		t.Errorf("after the crash: %+v", got)
	}
}

// An HTTP upstream's requests and logs are relayed too (proxy mode).
func TestProxyRelaysAnHTTPServersRequestsAndLogs(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "proxy.toml", fmt.Sprintf("[mcp_servers.remote]\nurl = %q\n", startHTTPTestServer(t)))
	c := startRaw(t, twBin, proxyArgs(t, cfg)...)
	c.initialize(capableClient)

	done := c.callAsync("40", "remote__roots", map[string]any{})
	req := c.serverRequest("roots/list")
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[{"uri":"file:///over/http"}]}}`, req.ID))
	if got := done(); got.Text != "roots: file:///over/http" {
		t.Errorf("roots over HTTP: %+v", got)
	}

	done = c.callAsync("41", "remote__sample", map[string]any{"prompt": "via http"})
	req = c.serverRequest("sampling/createMessage")
	if !strings.Contains(string(req.Params), `"via http"`) {
		t.Errorf("sampling params: %s", req.Params)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-7,"message":"no model here"}}`, req.ID))
	if got := done(); !got.IsError || !strings.Contains(got.Text, "no model here") {
		t.Errorf("sampling refused over HTTP: %+v", got)
	}

	if got := decodeCall(t, c.call("tools/call", map[string]any{"name": "remote__log", "arguments": map[string]any{}})); got.Text != "logged" {
		t.Fatalf("remote__log: %+v", got)
	}
	// mcp-go's streamable HTTP loses some of the notifications a server
	// sends during a call, even to mcp-go's client directly: wait for some.
	eventually(t, 5*time.Second, "log messages over HTTP", func() bool { return len(c.notesOf("notifications/message")) > 0 })
	time.Sleep(200 * time.Millisecond)
	logs := c.notesOf("notifications/message")
	if len(logs) > 8 {
		t.Errorf("%d log messages for 8 sent", len(logs))
	}
	for _, m := range logs {
		var p struct{ Logger string }
		_ = json.Unmarshal(m.Params, &p)
		if p.Logger != "remote/ts" {
			t.Errorf("logger %q: want remote/ts", p.Logger)
		}
	}
}

// client_capabilities limits what a server is told the client can do: a
// server not allowed sampling cannot reach the client's model, while its
// roots still come through.
func TestProxyTellsAServerOnlyTheCapabilitiesItIsAllowed(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "proxy.toml", fmt.Sprintf(`
[mcp_servers.alpha]
command = %q
args = ["-state", %q]
client_capabilities = ["roots"]
`, testServer, t.TempDir()))
	c := startRaw(t, twBin, proxyArgs(t, cfg)...)
	c.initialize(capableClient)

	got := decodeCall(t, c.call("tools/call", map[string]any{"name": "alpha__sample", "arguments": map[string]any{"prompt": "exfiltrate"}}))
	if !got.IsError || !strings.Contains(got.Text, "sampling failed") {
		t.Errorf("sampling withheld: %+v", got)
	}
	done := c.callAsync("50", "alpha__roots", map[string]any{})
	req := c.serverRequest("roots/list")
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"roots":[{"uri":"file:///allowed"}]}}`, req.ID))
	if got := done(); got.Text != "roots: file:///allowed" {
		t.Errorf("roots: %+v", got)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.reqs {
		if m.Method == "sampling/createMessage" {
			t.Errorf("a server without sampling reached the client's model: %s", m.Line)
		}
	}
}

// A server cannot flood the client: past 256 requests waiting for the
// client, the next are refused at once.
func TestWrapBoundsTheRequestsWaitingForTheClient(t *testing.T) {
	t.Parallel()
	c := startRaw(t, twBin, wrapArgs(t, "ts", nil, testServer, "-state", t.TempDir())...)
	c.initialize(capableClient)
	got := decodeCall(t, c.call("tools/call", map[string]any{"name": "roots_many", "arguments": map[string]any{"n": 300}}))
	if !strings.HasPrefix(got.Text, "refused 44: ") || !strings.Contains(got.Text, "more than 256 requests to the client are in flight") {
		t.Errorf("roots_many: %+v", got)
	}
	c.mu.Lock()
	n := 0
	for _, m := range c.reqs {
		if m.Method == "roots/list" {
			n++
		}
	}
	c.mu.Unlock()
	if n != 256 {
		t.Errorf("%d requests reached the client, want 256", n)
	}
}
