package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// rawClient speaks newline-delimited JSON-RPC to a process by hand, to send
// what no well-behaved client library would (forged approvals, replays,
// oversized messages) and to see the bytes the proxy writes.
type rawClient struct {
	t     testing.TB
	cmd   *exec.Cmd
	in    io.WriteCloser
	log   *testkit.Buffer
	mu    sync.Mutex
	wait  map[string]chan rawMessage
	notes []rawMessage
	reqs  []rawMessage // requests from the server
	next  int
	done  chan struct{}
}

type rawMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Line []byte `json:"-"`
}

func startRaw(t testing.TB, bin string, args ...string) *rawClient {
	t.Helper()
	c := &rawClient{t: t, wait: map[string]chan rawMessage{}, done: make(chan struct{}), log: newLog(t, bin)}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Stderr = c.log
	var err error
	if c.in, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go c.read(out)
	t.Cleanup(c.close)
	return c
}

func (c *rawClient) close() {
	c.in.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
	_ = c.cmd.Wait()
}

func (c *rawClient) read(r io.Reader) {
	defer close(c.done)
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var m rawMessage
			if json.Unmarshal(line, &m) != nil {
				c.t.Errorf("proxy wrote a line that is not JSON: %q", line)
				continue
			}
			m.Line = line
			c.mu.Lock()
			switch {
			case m.Method != "" && len(m.ID) > 0:
				c.reqs = append(c.reqs, m)
			case m.Method != "":
				c.notes = append(c.notes, m)
			default:
				if ch, ok := c.wait[string(m.ID)]; ok {
					ch <- m
					delete(c.wait, string(m.ID))
				} else {
					c.t.Errorf("response to an id nobody asked: %s", line)
				}
			}
			c.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// send writes one line as is.
func (c *rawClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and waits for its response.
func (c *rawClient) call(method string, params any) rawMessage {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := fmt.Sprint(c.next)
	ch := make(chan rawMessage, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	p, err := json.Marshal(params)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, p))
	select {
	case m := <-ch:
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no answer to %s %s within 30s", method, p)
	case <-c.done:
		c.t.Fatalf("process exited before answering %s", method)
	}
	return rawMessage{}
}

// initialize runs the legacy (2025-11-25) handshake.
func (c *rawClient) initialize(capabilities string) {
	c.t.Helper()
	if capabilities == "" {
		capabilities = "{}"
	}
	m := c.call("initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":`+capabilities+`,"clientInfo":{"name":"raw","version":"1"}}`))
	if m.Error != nil {
		c.t.Fatalf("initialize: %s", m.Error.Message)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// modernMeta is the _meta a 2026-07-28 request carries.
func modernMeta(elicitation bool) map[string]any {
	caps := map[string]any{}
	if elicitation {
		caps["elicitation"] = map[string]any{}
	}
	return map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.LATEST_PROTOCOL_VERSION,
		mcp.MetaKeyClientCapabilities: caps,
		mcp.MetaKeyClientInfo:         map[string]string{"name": "raw", "version": "1"},
	}
}

// toolsOf returns each tool's raw definition from a tools/list result, by name.
func toolsOf(t testing.TB, m rawMessage) (names []string, byName map[string]json.RawMessage) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("tools/list: %s", m.Error.Message)
	}
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(m.Result, &res); err != nil {
		t.Fatal(err)
	}
	byName = map[string]json.RawMessage{}
	for _, r := range res.Tools {
		var n struct{ Name string }
		_ = json.Unmarshal(r, &n)
		names = append(names, n.Name)
		byName[n.Name] = r
	}
	return names, byName
}

// callResult decodes a tools/call response: its text and isError.
type callResult struct {
	Text       string
	IsError    bool
	ResultType string
	State      string
	Asked      bool // an input_required result
}

func decodeCall(t testing.TB, m rawMessage) callResult {
	t.Helper()
	if m.Error != nil {
		return callResult{Text: m.Error.Message, IsError: true}
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError       bool            `json:"isError"`
		ResultType    string          `json:"resultType"`
		RequestState  string          `json:"requestState"`
		InputRequests json.RawMessage `json:"inputRequests"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range r.Content {
		texts = append(texts, c.Text)
	}
	return callResult{Text: strings.Join(texts, "\n"), IsError: r.IsError, ResultType: r.ResultType, State: r.RequestState, Asked: r.ResultType == "input_required"}
}

// scripted answers elicitations from a list, recording every question.
type scripted struct {
	mu      sync.Mutex
	answers []string // an option, or "decline" / "cancel"
	asked   []mcp.ElicitationRequest
}

func answers(a ...string) *scripted { return &scripted{answers: a} }

func (s *scripted) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, req)
	if len(s.answers) == 0 {
		return nil, fmt.Errorf("scripted: no answer left for %q", req.Params.Message)
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	switch a {
	case "decline":
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionDecline}}, nil
	case "cancel":
		return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionCancel}}, nil
	}
	return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action:  mcp.ElicitationResponseActionAccept,
		Content: map[string]any{"decision": a},
	}}, nil
}

func (s *scripted) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.asked)
}

func (s *scripted) last() mcp.ElicitationRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.asked[len(s.asked)-1]
}

// goClient is mcp-go's client, run against a command (toolwarden or an
// upstream directly).
type goClient struct {
	*client.Client
	notes chan mcp.JSONRPCNotification
	log   *testkit.Buffer
}

// startGo starts bin with args and connects mcp-go's client. legacy pins
// protocol 2025-11-25 (server-initiated elicitation); otherwise the client
// negotiates 2026-07-28 (multi round-trip elicitation). elicit may be nil:
// the client then declares no elicitation capability.
func startGo(t testing.TB, legacy bool, elicit *scripted, bin string, args ...string) *goClient {
	t.Helper()
	var opts []client.ClientOption
	if elicit != nil {
		opts = append(opts, client.WithElicitationHandler(elicit))
	}
	if legacy {
		opts = append(opts, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	}
	return startGoWith(t, opts, bin, args...)
}

// startGoWith is mcp-go's client with these options against a command.
func startGoWith(t testing.TB, opts []client.ClientOption, bin string, args ...string) *goClient {
	t.Helper()
	lg := newLog(t, bin)
	tr := transport.NewStdioWithOptions(bin, nil, args, transport.WithCommandStderrWriter(lg))
	c := client.NewClient(tr, opts...)
	ctx := testContext(t)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	g := &goClient{Client: c, notes: make(chan mcp.JSONRPCNotification, 64), log: lg}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		select {
		case g.notes <- n:
		default:
		}
	})
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "e2e", Version: "1"},
	}}); err != nil {
		t.Fatalf("initialize: %v\n%s", err, lg.String())
	}
	return g
}

func (g *goClient) call(t testing.TB, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := g.CallTool(testContext(t), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		return "error: " + err.Error(), true
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n"), res.IsError
}

func (g *goClient) toolNames(t testing.TB) []string {
	t.Helper()
	res, err := g.ListTools(testContext(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// drainNotes forgets notifications received so far.
func (g *goClient) drainNotes() {
	for {
		select {
		case <-g.notes:
		default:
			return
		}
	}
}

// waitTitle waits until tools/list shows tool with this title.
func (g *goClient) waitTitle(t testing.TB, tool, title string) {
	t.Helper()
	eventually(t, 20*time.Second, tool+" titled "+title, func() bool {
		res, err := g.ListTools(testContext(t), mcp.ListToolsRequest{})
		if err != nil {
			return false
		}
		for _, tl := range res.Tools {
			if tl.Name == tool && (tl.Title == title || tl.Annotations.Title == title) {
				return true
			}
		}
		return false
	})
}

// waitListChanged waits for notifications/tools/list_changed.
func (g *goClient) waitListChanged(t testing.TB) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case n := <-g.notes:
			if n.Method == string(mcp.MethodNotificationToolsListChanged) {
				return
			}
		case <-timeout:
			t.Fatal("no notifications/tools/list_changed within 20s")
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func toJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
