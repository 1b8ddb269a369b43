package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/channel"
)

// coreHTTP is one raw JSON-RPC exchange with serve over HTTP.
type coreHTTP struct {
	status int
	header http.Header
	msg    map[string]any // the JSON-RPC response (from JSON or the last SSE event)
	body   string
}

// corePost posts one JSON-RPC message with the given headers, answering
// nothing the server asks on the stream.
func corePost(t testing.TB, url string, header map[string]string, body any) coreHTTP {
	t.Helper()
	out, err := postRPC(t, &http.Client{Timeout: 60 * time.Second}, url, header, body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// postRPC posts one JSON-RPC message over hc with the given headers and
// reads the answer (JSON, or the last event of an SSE stream). The error
// is the request's own failure: no answer came.
func postRPC(t testing.TB, hc *http.Client, url string, header map[string]string, body any) (coreHTTP, error) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return coreHTTP{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := coreHTTP{status: resp.StatusCode, header: resp.Header, body: string(raw)}
	data := raw
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = []byte(d)
			}
		}
	}
	_ = json.Unmarshal(data, &out.msg)
	return out, nil
}

// result is the response's result object (nil for an error).
func (h coreHTTP) result() map[string]any {
	r, _ := h.msg["result"].(map[string]any)
	return r
}

// text is the joined text content of a tools/call result.
func (h coreHTTP) text() string {
	var parts []string
	content, _ := h.result()["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, "\n")
}

func (h coreHTTP) isError() bool { b, _ := h.result()["isError"].(bool); return b }

// coreModern is a 2026-07-28 request: protocol version and capabilities in
// _meta and the Mcp-* headers that mirror the body, for token (none if "").
func coreModern(token, method, name string, params map[string]any, elicit bool) (map[string]string, map[string]any) {
	caps := map[string]any{}
	if elicit {
		caps["elicitation"] = map[string]any{}
	}
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[mcp.MetaKeyProtocolVersion] = mcp.ProtocolVersion20260728
	meta[mcp.MetaKeyClientCapabilities] = caps
	meta[mcp.MetaKeyClientInfo] = map[string]any{"name": "raw", "version": "1"}
	params["_meta"] = meta
	h := map[string]string{"Mcp-Protocol-Version": mcp.ProtocolVersion20260728, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	if token != "" {
		h["Authorization"] = "Bearer " + token
	}
	return h, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
}

// coreTokens writes a tokens file naming alice and bob.
func coreTokens(t *testing.T) string {
	t.Helper()
	entry := func(token, principal string) string {
		sum := sha256.Sum256([]byte(token))
		return fmt.Sprintf("%q: {\"principal\": %q, \"groups\": [\"dev\"]}", "sha256:"+hex.EncodeToString(sum[:]), principal)
	}
	return writeFile(t, "tokens.json", "{"+entry("alice-token", "alice")+", "+entry("bob-token", "bob")+"}")
}

// coreAuthConfig is coreFilesystemConfig behind the tokens file.
func coreAuthConfig(t *testing.T, dir, everything string) string {
	t.Helper()
	base, err := os.ReadFile(coreFilesystemConfig(t, dir, everything))
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "serve-auth.toml", string(base)+fmt.Sprintf("\n[serve.auth]\ntokens_file = %q\n", coreTokens(t)))
}

// coreAsk makes a 2026-07-28 call to fs__create_directory that is asked
// about and returns the request state it carries.
func coreAsk(t *testing.T, url, token, path string) string {
	t.Helper()
	h, body := coreModern(token, "tools/call", "fs__create_directory", map[string]any{"name": "fs__create_directory", "arguments": map[string]any{"path": path}}, true)
	r := corePost(t, url, h, body)
	res := r.result()
	state, _ := res["requestState"].(string)
	if res["resultType"] != "input_required" || state == "" {
		t.Fatalf("an ask was not an input request (status %d): %s", r.status, r.body)
	}
	return state
}

// coreRetry retries the call with state and an "allow once" answer.
func coreRetry(t *testing.T, url, token, path, state string) coreHTTP {
	t.Helper()
	h, body := coreModern(token, "tools/call", "fs__create_directory", map[string]any{
		"name": "fs__create_directory", "arguments": map[string]any{"path": path},
		"requestState":   state,
		"inputResponses": map[string]any{channel.ElicitationID: map[string]any{"action": "accept", "content": map[string]any{"decision": "allow_once"}}},
	}, true)
	return corePost(t, url, h, body)
}

// A 2026-07-28 answer counts only with a request state serve minted for
// this principal, this tool and these arguments, once: a forged state,
// one for other arguments, one minted for another principal and one used
// already are refused, and the call is not made.
func TestServeRefusesForgedReplayedChangedAndOtherPrincipalsRequestStates(t *testing.T) {
	t.Parallel()
	dir := coreFSDir(t)
	srv := coreStartServe(t, nil, "--config", coreAuthConfig(t, dir, coreEverythingHTTP(t)))
	eventually(t, 30*time.Second, "fs tools", func() bool {
		h, body := coreModern("alice-token", "tools/list", "", map[string]any{}, true)
		return strings.Contains(corePost(t, srv.url, h, body).body, "fs__create_directory")
	})
	path := func(n string) string { return filepath.Join(dir, n) }
	refusedAndNotMade := func(what string, r coreHTTP, p, why string) {
		t.Helper()
		if !r.isError() || fileExists(p) {
			t.Fatalf("%s: the call ran (status %d): %s", what, r.status, r.body)
		}
		mustContain(t, r.text(), "refused the approval")
		mustContain(t, r.text(), why)
	}

	refusedAndNotMade("a forged state", coreRetry(t, srv.url, "alice-token", path("forged"), "tw1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), path("forged"), "forged")

	s := coreAsk(t, srv.url, "alice-token", path("asked"))
	refusedAndNotMade("a state for other arguments", coreRetry(t, srv.url, "alice-token", path("other"), s), path("other"), "arguments differ")

	s = coreAsk(t, srv.url, "alice-token", path("alices"))
	refusedAndNotMade("alice's state retried by bob", coreRetry(t, srv.url, "bob-token", path("alices"), s), path("alices"), "another session")

	s = coreAsk(t, srv.url, "alice-token", path("once"))
	if r := coreRetry(t, srv.url, "alice-token", path("once"), s); r.isError() || !fileExists(path("once")) {
		t.Fatalf("the genuine retry did not run (status %d): %s", r.status, r.body)
	}
	if err := os.Remove(path("once")); err != nil {
		t.Fatal(err)
	}
	refusedAndNotMade("the same state again", coreRetry(t, srv.url, "alice-token", path("once"), s), path("once"), "already used")
}

// A 2025-era session id is good only for the principal it was issued to:
// another principal presenting it, or a forged id, gets 404 and sees
// nothing, while its owner keeps using it.
func TestServeRefusesASessionIDPresentedByAnotherPrincipal(t *testing.T) {
	t.Parallel()
	dir := coreFSDir(t)
	srv := coreStartServe(t, nil, "--config", coreAuthConfig(t, dir, coreEverythingHTTP(t)))
	legacy := func(token, sid string, id int, method string, params map[string]any) coreHTTP {
		h := map[string]string{"Authorization": "Bearer " + token, "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
		if sid != "" {
			h["Mcp-Session-Id"] = sid
		}
		return corePost(t, srv.url, h, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	}
	init := legacy("alice-token", "", 1, "initialize", map[string]any{"protocolVersion": mcp.ProtocolVersion20251125, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}})
	sid := init.header.Get("Mcp-Session-Id")
	if init.status != 200 || !strings.HasPrefix(sid, "tws1.") {
		t.Fatalf("initialize: status %d, session %q: %s", init.status, sid, init.body)
	}
	eventually(t, 30*time.Second, "alice listed fs tools in her session", func() bool {
		return strings.Contains(legacy("alice-token", sid, 2, "tools/list", map[string]any{}).body, "fs__read_text_file")
	})
	for name, r := range map[string]coreHTTP{
		"bob with alice's session id":    legacy("bob-token", sid, 3, "tools/list", map[string]any{}),
		"bob calling in alice's session": legacy("bob-token", sid, 4, "tools/call", map[string]any{"name": "every__echo", "arguments": map[string]any{"message": "hi"}}),
		"a forged session id":            legacy("alice-token", "tws1.AAAA.BBBB", 5, "tools/list", map[string]any{}),
		"mcp-go's own kind of id":        legacy("alice-token", "mcp-session-00000000-0000-0000-0000-000000000000", 6, "tools/list", map[string]any{}),
	} {
		if r.status != http.StatusNotFound || strings.Contains(r.body, "fs__") || strings.Contains(r.body, "Echo") {
			t.Errorf("%s: status %d: %s", name, r.status, r.body)
		}
	}
	if r := legacy("alice-token", sid, 7, "tools/call", map[string]any{"name": "every__echo", "arguments": map[string]any{"message": "still mine"}}); !strings.Contains(r.body, "still mine") {
		t.Fatalf("alice's session stopped working: status %d: %s", r.status, r.body)
	}
	// The session's stream (GET), where its notifications and requests
	// go, opens only for its owner.
	for who, want := range map[string]int{"bob-token": http.StatusNotFound, "alice-token": http.StatusOK} {
		if got := coreOpenStream(t, srv.url, who, sid); got != want {
			t.Errorf("GET of alice's session stream with %s: status %d, want %d", who, got, want)
		}
	}
	if got := coreOpenStream(t, srv.url, "alice-token", "tws1.AAAA.BBBB"); got != http.StatusNotFound {
		t.Errorf("GET of a forged session's stream: status %d", got)
	}
	// No token: 401, and the challenge names this listener (the port
	// bound for --listen 127.0.0.1:0, not port 0).
	anon := corePost(t, srv.url, map[string]string{"Mcp-Protocol-Version": mcp.ProtocolVersion20251125}, map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
	challenge := anon.header.Get("WWW-Authenticate")
	if anon.status != http.StatusUnauthorized || !strings.Contains(challenge, strings.TrimSuffix(srv.url, "/mcp")+"/.well-known/oauth-protected-resource") {
		t.Errorf("no token: status %d, WWW-Authenticate %q (serve is at %s)", anon.status, challenge, srv.url)
	}
}

// coreOpenStream opens a 2025-era session's GET stream and returns the
// status (the stream itself is closed at once).
func coreOpenStream(t *testing.T, url, token, sid string) int {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A 2026-07-28 request whose Mcp-Method or Mcp-Name header says something
// other than its body is refused before anything is decided or called; a
// request whose headers match is served with no session id, and its tool
// list is marked private to the caller.
func TestServeRefusesHeadersThatDisagreeWithTheBody(t *testing.T) {
	t.Parallel()
	dir := coreFSDir(t)
	srv := coreStartServe(t, nil, "--config", coreFilesystemConfig(t, dir, coreEverythingHTTP(t)))
	var list coreHTTP
	eventually(t, 30*time.Second, "fs tools", func() bool {
		h, body := coreModern("", "tools/list", "", map[string]any{}, true)
		list = corePost(t, srv.url, h, body)
		return strings.Contains(list.body, "fs__create_directory")
	})
	if list.header.Get("Mcp-Session-Id") != "" {
		t.Errorf("a 2026-07-28 answer carries a session id: %q", list.header.Get("Mcp-Session-Id"))
	}
	if got := list.result()["cacheScope"]; got != "private" {
		t.Errorf("the filtered list's cacheScope is %v, want private: %s", got, list.body)
	}
	target := filepath.Join(dir, "by-header")
	call := func(mutate func(h map[string]string)) coreHTTP {
		h, body := coreModern("", "tools/call", "fs__read_text_file", map[string]any{"name": "fs__create_directory", "arguments": map[string]any{"path": target}}, false)
		h["Mcp-Name"] = "fs__create_directory"
		mutate(h)
		return corePost(t, srv.url, h, body)
	}
	for name, mutate := range map[string]func(map[string]string){
		"Mcp-Name names another tool":             func(h map[string]string) { h["Mcp-Name"] = "fs__read_text_file" },
		"Mcp-Method names another method":         func(h map[string]string) { h["Mcp-Method"] = "tools/list" },
		"no Mcp-Name":                             func(h map[string]string) { delete(h, "Mcp-Name") },
		"no Mcp-Method":                           func(h map[string]string) { delete(h, "Mcp-Method") },
		"Mcp-Protocol-Version names the 2025 era": func(h map[string]string) { h["Mcp-Protocol-Version"] = mcp.ProtocolVersion20251125 },
	} {
		r := call(mutate)
		if r.status != http.StatusBadRequest || r.result() != nil || fileExists(target) {
			t.Errorf("%s: status %d: %s", name, r.status, r.body)
		}
	}
	// The same call with headers that agree is decided (an ask, to a
	// client that cannot elicit: a deny that says how to approve).
	if r := call(func(map[string]string) {}); r.status != 200 || !strings.Contains(r.text(), "needs the user's approval") {
		t.Fatalf("matching headers: status %d: %s", r.status, r.body)
	}
}

// The caller's Authorization header never reaches an upstream: the HTTP
// upstream sees only the bearer token its [mcp_servers] entry names, or
// none.
func TestServeNeverPassesTheCallersTokenToAnUpstream(t *testing.T) {
	t.Parallel()
	withToken, bare := startHTTPTestServer(t), startHTTPTestServer(t)
	cfg := writeFile(t, "serve.toml", fmt.Sprintf(`
[mcp_servers.up]
url = %q
bearer_token_env_var = "TW_UPSTREAM_TOKEN"

[mcp_servers.bare]
url = %q

[serve.auth]
tokens_file = %q

[serve.rate_limit]
calls_per_second = 1000
burst = 2000
`, withToken, bare, coreTokens(t)))
	srv := coreStartServe(t, []string{"TW_UPSTREAM_TOKEN=upstream-secret"}, "--config", cfg)
	for _, era := range coreEras {
		t.Run(era.name, func(t *testing.T) {
			c := coreClient(t, srv.url, era.version, nil, map[string]string{"Authorization": "Bearer alice-token"})
			eventually(t, 30*time.Second, "both upstreams' tools", func() bool {
				names := c.toolNames(t)
				return contains(names, "up__headers") && contains(names, "bare__headers")
			})
			out, isErr := c.call(t, "up__headers", nil)
			if isErr || !strings.HasPrefix(out, "authorization=Bearer upstream-secret ") {
				t.Fatalf("up__headers: %q (error %v)", out, isErr)
			}
			out, isErr = c.call(t, "bare__headers", nil)
			if isErr || !strings.HasPrefix(out, "authorization= ") {
				t.Fatalf("bare__headers: %q (error %v)", out, isErr)
			}
			if strings.Contains(out, "alice-token") {
				t.Fatalf("the caller's token reached the upstream: %q", out)
			}
		})
	}
}

// A result over [serve] max_result_kib is a tool error that says so, from
// an HTTP upstream and from a stdio one, and serve keeps serving.
func TestServeBoundsTheResultSize(t *testing.T) {
	t.Parallel()
	dir := coreFSDir(t)
	if err := os.WriteFile(filepath.Join(dir, "big.txt"), bytes.Repeat([]byte("x"), 64<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	base, err := os.ReadFile(coreFilesystemConfig(t, dir, coreEverythingHTTP(t)))
	if err != nil {
		t.Fatal(err)
	}
	srv := coreStartServe(t, nil, "--config", writeFile(t, "small.toml", string(base)+"\n[serve]\nmax_result_kib = 32\n"))
	c := coreClient(t, srv.url, mcp.ProtocolVersion20251125, nil, nil)
	eventually(t, 30*time.Second, "both servers' tools", func() bool {
		names := c.toolNames(t)
		return contains(names, "fs__read_text_file") && contains(names, "every__echo")
	})
	for name, call := range map[string]func() (string, bool){
		"stdio": func() (string, bool) {
			return c.call(t, "fs__read_text_file", map[string]any{"path": filepath.Join(dir, "big.txt")})
		},
		"stream HTTP": func() (string, bool) {
			return c.call(t, "every__echo", map[string]any{"message": strings.Repeat("y", 64<<10)})
		},
	} {
		out, isErr := call()
		if !isErr || !strings.Contains(out, "over toolwarden") || !strings.Contains(out, "32768 bytes") || strings.Contains(out, "xxxxxxxx") {
			t.Errorf("%s: %.300q (error %v)", name, out, isErr)
		}
	}
	if out, isErr := c.call(t, "every__echo", map[string]any{"message": "small"}); isErr || !strings.Contains(out, "small") {
		t.Fatalf("after the large results: %q (error %v)", out, isErr)
	}
}

// coreCallIn is a 2026-07-28 tools/call by token in conversation conv
// ("": none), with extra params (requestState, inputResponses).
func coreCallIn(t testing.TB, url, token, conv, tool string, args map[string]any, extra map[string]any) coreHTTP {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args}
	if conv != "" {
		params["_meta"] = map[string]any{"io.toolwarden/conversation": conv}
	}
	for k, v := range extra {
		params[k] = v
	}
	h, body := coreModern(token, "tools/call", tool, params, true)
	return corePost(t, url, h, body)
}

// answered is the retry of an asked call with the human's option.
func answered(r coreHTTP, option string) map[string]any {
	return map[string]any{
		"requestState":   r.result()["requestState"],
		"inputResponses": map[string]any{channel.ElicitationID: map[string]any{"action": "accept", "content": map[string]any{"decision": option}}},
	}
}

// "Allow for this session" (to testserver's mutable tool, which is asked
// about and may be remembered) is remembered for the principal and the
// session it was given in: under 2026-07-28 for the principal and the
// conversation key, under 2025-11-25 for the principal and the
// Mcp-Session-Id. Another conversation, another session or another
// principal is asked again.
func TestServeKeysSessionApprovalsByPrincipalAndSession(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "serve.toml", fmt.Sprintf(`
[mcp_servers.every]
url = %q

[serve.auth]
tokens_file = %q

[serve.rate_limit]
calls_per_second = 1000
burst = 2000
`, startHTTPTestServer(t), coreTokens(t)))
	srv := coreStartServe(t, nil, "--config", cfg)
	echo := map[string]any{"x": "1"}
	eventually(t, 30*time.Second, "every's tools", func() bool {
		h, body := coreModern("alice-token", "tools/list", "", map[string]any{}, true)
		return strings.Contains(corePost(t, srv.url, h, body).body, "every__mutable")
	})
	asked := func(r coreHTTP) bool { return r.result()["resultType"] == "input_required" }

	t.Run("2026-07-28 conversations", func(t *testing.T) {
		first := coreCallIn(t, srv.url, "alice-token", "conv-a", "every__mutable", echo, nil)
		if !asked(first) {
			t.Fatalf("the first call was not asked about: %s", first.body)
		}
		if r := coreCallIn(t, srv.url, "alice-token", "conv-a", "every__mutable", echo, answered(first, "allow_session")); !strings.Contains(r.text(), "mutable v0 ran") || r.isError() {
			t.Fatalf("the approved retry: %s", r.body)
		}
		if r := coreCallIn(t, srv.url, "alice-token", "conv-a", "every__mutable", echo, nil); asked(r) || !strings.Contains(r.text(), "mutable v0 ran") {
			t.Fatalf("alice's conversation asked again after allow for this session: %s", r.body)
		}
		for who, r := range map[string]coreHTTP{
			"alice in another conversation": coreCallIn(t, srv.url, "alice-token", "conv-b", "every__mutable", echo, nil),
			"alice with no conversation":    coreCallIn(t, srv.url, "alice-token", "", "every__mutable", echo, nil),
			"bob in alice's conversation":   coreCallIn(t, srv.url, "bob-token", "conv-a", "every__mutable", echo, nil),
		} {
			if !asked(r) {
				t.Errorf("%s was not asked: %s", who, r.body)
			}
		}
	})

	t.Run("2025-11-25 sessions", func(t *testing.T) {
		alice := map[string]string{"Authorization": "Bearer alice-token"}
		ask := answers("allow_session")
		one := coreClient(t, srv.url, mcp.ProtocolVersion20251125, ask, alice)
		for i := 0; i < 2; i++ {
			if out, isErr := one.call(t, "every__mutable", echo); isErr || !strings.Contains(out, "mutable v0 ran") {
				t.Fatalf("call %d in alice's session: %q (error %v)", i, out, isErr)
			}
		}
		if ask.count() != 1 {
			t.Fatalf("alice's session was asked %d times, want 1", ask.count())
		}
		for who, headers := range map[string]map[string]string{
			"alice in another session": alice,
			"bob":                      {"Authorization": "Bearer bob-token"},
		} {
			other := answers("deny")
			c := coreClient(t, srv.url, mcp.ProtocolVersion20251125, other, headers)
			if out, isErr := c.call(t, "every__mutable", echo); !isErr || other.count() != 1 {
				t.Errorf("%s: %q (error %v), asked %d times", who, out, isErr, other.count())
			}
		}
	})
}

// Another principal who learns a 2025-era session id cannot answer the
// approval prompt sent to that session: its answer is refused (404), and
// the call waits for the owner's own answer.
func TestServeRefusesAnAnswerToAnotherPrincipalsPrompt(t *testing.T) {
	t.Parallel()
	dir := coreFSDir(t)
	srv := coreStartServe(t, nil, "--config", coreAuthConfig(t, dir, coreEverythingHTTP(t)))
	headers := func(token, sid string) map[string]string {
		h := map[string]string{"Authorization": "Bearer " + token, "Mcp-Protocol-Version": mcp.ProtocolVersion20251125}
		if sid != "" {
			h["Mcp-Session-Id"] = sid
		}
		return h
	}
	init := corePost(t, srv.url, headers("alice-token", ""), map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": mcp.ProtocolVersion20251125, "capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}})
	sid := init.header.Get("Mcp-Session-Id")
	corePost(t, srv.url, headers("alice-token", sid), map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	eventually(t, 30*time.Second, "fs tools", func() bool {
		return strings.Contains(corePost(t, srv.url, headers("alice-token", sid), map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).body, "fs__create_directory")
	})

	// Alice's call, whose response stream carries the prompt.
	target := filepath.Join(dir, "asked-of-alice")
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": map[string]any{"name": "fs__create_directory", "arguments": map[string]any{"path": target}}})
	req, _ := http.NewRequest("POST", srv.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers("alice-token", sid) {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := make(chan map[string]any, 8)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					events <- m
				}
			}
		}
		close(events)
	}()
	// Notifications may come first on the stream (the tool list changes as
	// the other upstream starts); the first request must be the prompt.
	var prompt map[string]any
	for prompt == nil {
		select {
		case m := <-events:
			if _, isRequest := m["id"]; !isRequest && m["method"] != nil {
				continue
			}
			if m["method"] != "elicitation/create" {
				t.Fatalf("first request or answer on the call stream: %v", m)
			}
			prompt = m
		case <-time.After(30 * time.Second):
			t.Fatal("no approval prompt on alice's call stream")
		}
	}
	answer := func(option string) map[string]any {
		return map[string]any{"jsonrpc": "2.0", "id": prompt["id"], "result": map[string]any{"action": "accept", "content": map[string]any{"decision": option}}}
	}
	if r := corePost(t, srv.url, headers("bob-token", sid), answer("allow_once")); r.status != http.StatusNotFound {
		t.Fatalf("bob's answer to alice's prompt: status %d: %s", r.status, r.body)
	}
	if r := corePost(t, srv.url, headers("alice-token", sid), answer("deny")); r.status != http.StatusAccepted {
		t.Fatalf("alice's answer: status %d: %s", r.status, r.body)
	}
	var final map[string]any
	for m := range events {
		final = m
	}
	res, _ := final["result"].(map[string]any)
	if res == nil || res["isError"] != true || fileExists(target) {
		t.Fatalf("the call after alice denied it: %v (exists %v)", final, fileExists(target))
	}
}

// Policy that names groups and approvers holds through serve for each
// caller: a tool restricted to a group is listed to and callable by its
// members only (anyone else is denied without being asked), and an ask
// whose approvers are a group is not allowed by a caller outside it.
func TestServeAppliesGroupsAndApproversToEachCaller(t *testing.T) {
	t.Parallel()
	dir := coreFSDir(t)
	entry := func(token, principal, group string) string {
		sum := sha256.Sum256([]byte(token))
		return fmt.Sprintf("%q: {\"principal\": %q, \"groups\": [%q]}", "sha256:"+hex.EncodeToString(sum[:]), principal, group)
	}
	tokens := writeFile(t, "tokens.json", "{"+entry("dev-token", "dana", "dev")+", "+entry("ops-token", "olga", "ops")+"}")
	cfg := writeFile(t, "groups.toml", fmt.Sprintf(`
[mcp_servers.fs]
command = %q
args = [%q]

[apps.fs]
default_tools_approval_mode = "writes"

[apps.fs.tools.create_directory]
groups = ["ops"]
approvers = ["group:leads"]

[serve.auth]
tokens_file = %q

[serve.rate_limit]
calls_per_second = 1000
burst = 2000
`, npmServer(t, "mcp-server-filesystem"), dir, tokens))
	srv := coreStartServe(t, nil, "--config", cfg)
	for _, era := range coreEras {
		t.Run(era.name, func(t *testing.T) {
			devAsk, opsAsk := answers("allow_once"), answers("allow_once")
			dev := coreClient(t, srv.url, era.version, devAsk, map[string]string{"Authorization": "Bearer dev-token"})
			ops := coreClient(t, srv.url, era.version, opsAsk, map[string]string{"Authorization": "Bearer ops-token"})
			eventually(t, 30*time.Second, "fs tools", func() bool { return contains(ops.toolNames(t), "fs__read_text_file") })
			if names := dev.toolNames(t); contains(names, "fs__create_directory") || !contains(names, "fs__read_text_file") {
				t.Fatalf("dana (dev) is listed: %v", names)
			}
			if names := ops.toolNames(t); !contains(names, "fs__create_directory") {
				t.Fatalf("olga (ops) is not listed create_directory: %v", names)
			}
			byDev := filepath.Join(dir, "by-dev-"+era.version)
			if out, isErr := dev.call(t, "fs__create_directory", map[string]any{"path": byDev}); !isErr || fileExists(byDev) || devAsk.count() != 0 {
				t.Fatalf("dana called a tool of ops: %q (error %v, asked %d)", out, isErr, devAsk.count())
			}
			byOps := filepath.Join(dir, "by-ops-"+era.version)
			out, isErr := ops.call(t, "fs__create_directory", map[string]any{"path": byOps})
			if !isErr || fileExists(byOps) {
				t.Fatalf("olga, not a lead, approved her own call: %q (error %v, asked %d)", out, isErr, opsAsk.count())
			}
			mustContain(t, out, "leads")
		})
	}
}
