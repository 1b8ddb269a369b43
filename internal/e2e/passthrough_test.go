package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Prompts, resources and completions pass through toolwarden: unchanged in
// front of one server (wrap); namespaced, merged and routed in front of
// several (proxy), where a resource URI goes only to the server that
// listed it.

// result returns a response's result, failing the test on an error.
func result(t testing.TB, what string, m rawMessage) json.RawMessage {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("%s: error %d %s", what, m.Error.Code, m.Error.Message)
	}
	return m.Result
}

// decoded is raw JSON decoded, for comparing values rather than bytes.
func decoded(t testing.TB, raw json.RawMessage) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	return v
}

// sameJSON fails unless two raw values decode to the same value.
func sameJSON(t testing.TB, what string, got, want json.RawMessage) {
	t.Helper()
	if !reflect.DeepEqual(decoded(t, got), decoded(t, want)) {
		t.Errorf("%s differs:\nserver     %s\ntoolwarden %s", what, want, got)
	}
}

// items returns the array under key of a list result, each item raw.
func items(t testing.TB, raw json.RawMessage, key string) []json.RawMessage {
	t.Helper()
	var res map[string]json.RawMessage
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if _, ok := res["nextCursor"]; ok {
		t.Errorf("a list with a nextCursor: %s", raw)
	}
	var out []json.RawMessage
	if err := json.Unmarshal(res[key], &out); err != nil {
		t.Fatalf("%s: %v in %s", key, err, raw)
	}
	return out
}

// member reads one string member of a raw object.
func member(t testing.TB, raw json.RawMessage, key string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	s, _ := m[key].(string)
	return s
}

// mark is how many notifications came so far (see waitNote).
func (c *rawClient) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.notes)
}

// waitNote waits for a notification with this method whose params contain
// want, after the first from, and returns its params.
func (c *rawClient) waitNote(from int, method, want string) json.RawMessage {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c.mu.Lock()
		for _, n := range c.notes[from:] {
			if n.Method == method && strings.Contains(string(n.Params), want) {
				c.mu.Unlock()
				return n.Params
			}
		}
		c.mu.Unlock()
		if time.Now().After(deadline) {
			c.t.Fatalf("no %s with %q within 20s", method, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// capabilities returns the capabilities of an initialize answer.
func (c *rawClient) capabilities() map[string]any {
	c.t.Helper()
	m := c.call("initialize", json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`))
	var res struct {
		Capabilities map[string]any `json:"capabilities"`
	}
	if err := json.Unmarshal(result(c.t, "initialize", m), &res); err != nil {
		c.t.Fatal(err)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res.Capabilities
}

// Through wrap, server-everything's prompts, resources, resource
// templates and completions are the server's own: the lists byte for
// byte, prompts/get, resources/read, completion/complete and the server's
// errors as the server answers them; subscriptions deliver updates.
func TestWrapPassesPromptsAndResourcesThrough(t *testing.T) {
	t.Parallel()
	every := npmServer(t, "mcp-server-everything")
	direct := startRaw(t, every)
	direct.initialize("")
	cfg := writeFile(t, "wrap.toml", "[apps.everything]\ndefault_tools_approval_mode = \"approve\"\n")
	wrapped := startRaw(t, twBin, wrapArgs(t, "everything", []string{cfg}, every)...)
	caps := wrapped.capabilities()
	if toJSON(t, caps["prompts"]) != `{"listChanged":true}` || toJSON(t, caps["resources"]) != `{"listChanged":true,"subscribe":true}` || caps["completions"] == nil {
		t.Errorf("capabilities: %s", toJSON(t, caps))
	}

	for _, method := range []string{"prompts/list", "resources/list", "resources/templates/list"} {
		want := result(t, "server "+method, direct.call(method, map[string]any{}))
		got := result(t, "wrap "+method, wrapped.call(method, map[string]any{}))
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs:\nserver %s\nwrap   %s", method, want, got)
		}
		sameJSON(t, method, got, want)
	}
	if n := len(items(t, result(t, "resources/list", wrapped.call("resources/list", map[string]any{})), "resources")); n == 0 {
		t.Fatal("server-everything lists no resources: the comparison above proves nothing")
	}

	same := func(method string, params any) json.RawMessage {
		t.Helper()
		want := result(t, "server "+method, direct.call(method, params))
		got := result(t, "wrap "+method, wrapped.call(method, params))
		sameJSON(t, method+" "+toJSON(t, params), got, want)
		return got
	}
	got := same("prompts/get", map[string]any{"name": "args-prompt", "arguments": map[string]any{"city": "Lyon", "state": "Rhône"}})
	mustContain(t, string(got), "Lyon")
	got = same("resources/read", map[string]any{"uri": "demo://resource/static/document/features.md"})
	mustContain(t, string(got), `"text"`)
	got = same("completion/complete", map[string]any{
		"ref":      map[string]any{"type": "ref/prompt", "name": "completable-prompt"},
		"argument": map[string]any{"name": "name", "value": "A"},
		"context":  map[string]any{"arguments": map[string]any{"department": "Engineering"}},
	})
	if v := decoded(t, got).(map[string]any)["completion"].(map[string]any)["values"]; toJSON(t, v) != `["Alice"]` {
		t.Errorf("completion: %s", got)
	}
	same("completion/complete", map[string]any{
		"ref":      map[string]any{"type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}"},
		"argument": map[string]any{"name": "resourceId", "value": "1"},
	})

	// A template's resource is read from the server (its text carries the
	// time it was made, so only its start is compared).
	r := result(t, "read from a template", wrapped.call("resources/read", map[string]any{"uri": "demo://resource/dynamic/text/3"}))
	mustContain(t, string(r), "Resource 3: This is a plaintext resource")

	// The server's errors come back as the server sent them.
	for _, bad := range []struct {
		method string
		params any
	}{
		{"prompts/get", map[string]any{"name": "no-such-prompt"}},
		{"prompts/get", map[string]any{"name": "args-prompt"}}, // a required argument missing
		{"resources/read", map[string]any{"uri": "demo://resource/static/document/no-such.md"}},
	} {
		want, got := direct.call(bad.method, bad.params), wrapped.call(bad.method, bad.params)
		if want.Error == nil || got.Error == nil || *got.Error != *want.Error {
			t.Errorf("%s %s: server answered %s, wrap %s", bad.method, toJSON(t, bad.params), want.Line, got.Line)
		}
	}

	// A subscription delivers the server's updates.
	uri := "demo://resource/static/document/architecture.md"
	if r := result(t, "subscribe", wrapped.call("resources/subscribe", map[string]any{"uri": uri})); string(r) != `{}` {
		t.Errorf("subscribe: %s", r)
	}
	from := wrapped.mark()
	if res := decodeCall(t, wrapped.call("tools/call", map[string]any{"name": "toggle-subscriber-updates", "arguments": map[string]any{}})); res.IsError {
		t.Fatalf("toggle-subscriber-updates: %s", res.Text)
	}
	wrapped.waitNote(from, "notifications/resources/updated", uri)
	result(t, "unsubscribe", wrapped.call("resources/unsubscribe", map[string]any{"uri": uri}))
}

// A server without prompts, resources or completions (server-filesystem
// declares only tools) yields empty lists and no completions through
// wrap, not errors; what cannot be empty is an error that says why.
func TestWrapServerWithoutPromptsOrResources(t *testing.T) {
	t.Parallel()
	fs := npmServer(t, "mcp-server-filesystem")
	c := startRaw(t, twBin, wrapArgs(t, "fs", nil, fs, t.TempDir())...)
	c.initialize("")
	for method, want := range map[string]string{
		"prompts/list":             `{"prompts":[]}`,
		"resources/list":           `{"resources":[]}`,
		"resources/templates/list": `{"resourceTemplates":[]}`,
	} {
		if got := result(t, method, c.call(method, map[string]any{})); string(got) != want {
			t.Errorf("%s: %s, want %s", method, got, want)
		}
	}
	got := result(t, "completion/complete", c.call("completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "x"}, "argument": map[string]any{"name": "a", "value": ""},
	}))
	if string(got) != `{"completion":{"values":[]}}` {
		t.Errorf("completion/complete: %s", got)
	}
	m := c.call("resources/read", map[string]any{"uri": "file:///etc/passwd"})
	if m.Error == nil || m.Error.Code != -32601 || !strings.Contains(m.Error.Message, "does not offer resources/read") {
		t.Errorf("resources/read: %s", m.Line)
	}
	if r := decodeCall(t, c.call("tools/call", map[string]any{"name": "list_allowed_directories", "arguments": map[string]any{}})); r.IsError {
		t.Errorf("a tool call after them: %s", r.Text)
	}
}

// teeServer is an [mcp_servers.<name>] table that runs cmd behind tee,
// which logs every byte the proxy sends the server to log.
func teeServer(t testing.TB, name, log, extra string, cmd ...string) string {
	args := []string{"-c", `tee -a "$0" | "$@"`, log}
	return fmt.Sprintf("[mcp_servers.%s]\ncommand = \"/bin/sh\"\nargs = %s\n%s\n", name, toJSON(t, append(args, cmd...)), extra)
}

// In proxy mode, prompts are named <server>__<prompt> and routed by that
// name; resources and templates of every server are merged, keep their
// URIs, and a read, subscription or completion goes to the server that
// listed the URI. A URI nobody listed is refused and reaches no server.
// Subscriptions deliver the right server's updates, and a server's
// list_changed reaches the client.
func TestProxyRoutesPromptsAndResources(t *testing.T) {
	t.Parallel()
	every := npmServer(t, "mcp-server-everything")
	memory := npmServer(t, "mcp-server-memory")
	fs := npmServer(t, "mcp-server-filesystem")
	logs := t.TempDir()
	logOf := func(s string) string { return filepath.Join(logs, s+".log") }
	cfg := writeFile(t, "proxy.toml",
		// Approved where Codex reads it: [apps.*] cannot lift a defined
		// server's asks (never looser than Codex).
		teeServer(t, "everything", logOf("everything"), `default_tools_approval_mode = "approve"`, every)+
			teeServer(t, "memory", logOf("memory"), fmt.Sprintf("env = { MEMORY_FILE_PATH = %q }\ndefault_tools_approval_mode = \"approve\"", filepath.Join(t.TempDir(), "memory.jsonl")), memory)+
			teeServer(t, "files", logOf("files"), "", fs, t.TempDir()))
	direct := startRaw(t, every)
	direct.initialize("")
	c := startRaw(t, twBin, proxyArgs(t, cfg)...)
	c.initialize("")

	// Prompts: everything's, renamed; memory and files have none.
	want := items(t, result(t, "server prompts/list", direct.call("prompts/list", map[string]any{})), "prompts")
	got := items(t, result(t, "proxy prompts/list", c.call("prompts/list", map[string]any{})), "prompts")
	if len(got) != len(want) || len(want) == 0 {
		t.Fatalf("prompts: %d through the proxy, %d from the server", len(got), len(want))
	}
	for i := range want {
		var w, g map[string]any
		_ = json.Unmarshal(want[i], &w)
		_ = json.Unmarshal(got[i], &g)
		w["name"] = "everything__" + w["name"].(string)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("prompt %d:\nwant %s\ngot  %s", i, toJSON(t, w), got[i])
		}
	}
	args := map[string]any{"city": "Lyon"}
	sameJSON(t, "prompts/get",
		result(t, "proxy prompts/get", c.call("prompts/get", map[string]any{"name": "everything__args-prompt", "arguments": args})),
		result(t, "server prompts/get", direct.call("prompts/get", map[string]any{"name": "args-prompt", "arguments": args})))
	for _, name := range []string{"args-prompt", "nobody__args-prompt", "memory__args-prompt"} {
		if m := c.call("prompts/get", map[string]any{"name": name}); m.Error == nil {
			t.Errorf("prompts/get %s: %s", name, m.Line)
		}
	}

	// Resources: everything's, then memory's (config order is name order:
	// everything, files, memory), no cursor.
	res := items(t, result(t, "proxy resources/list", c.call("resources/list", map[string]any{})), "resources")
	everyRes := items(t, result(t, "server resources/list", direct.call("resources/list", map[string]any{})), "resources")
	if len(res) != len(everyRes)+1 || member(t, res[len(res)-1], "uri") != "memory://knowledge-graph" {
		t.Fatalf("resources: %s", toJSON(t, res))
	}
	for i := range everyRes {
		sameJSON(t, "resource", res[i], everyRes[i])
	}
	sameJSON(t, "resources/templates/list",
		result(t, "proxy templates", c.call("resources/templates/list", map[string]any{})),
		result(t, "server templates", direct.call("resources/templates/list", map[string]any{})))

	// Reads go to the server that listed the URI or its template.
	doc := "demo://resource/static/document/features.md"
	sameJSON(t, "read "+doc,
		result(t, "proxy read", c.call("resources/read", map[string]any{"uri": doc})),
		result(t, "server read", direct.call("resources/read", map[string]any{"uri": doc})))
	mustContain(t, string(result(t, "read the graph", c.call("resources/read", map[string]any{"uri": "memory://knowledge-graph"}))), "entities")
	mustContain(t, string(result(t, "read from a template", c.call("resources/read", map[string]any{"uri": "demo://resource/dynamic/text/5"}))), "Resource 5")

	// Completions: by the prompt's name, or the template's URI.
	comp := result(t, "complete a prompt", c.call("completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "everything__completable-prompt"}, "argument": map[string]any{"name": "department", "value": "Ma"},
	}))
	if !strings.Contains(string(comp), `"values":["Marketing"]`) {
		t.Errorf("completion: %s", comp)
	}
	result(t, "complete a template", c.call("completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}"}, "argument": map[string]any{"name": "resourceId", "value": "1"},
	}))

	// URIs nobody listed are refused, and reach no server.
	for _, uri := range []string{"demo://resource/static/document/secret-token-1.md", "file:///home/me/secret-token-2", "memory://secret-token-3"} {
		for _, method := range []string{"resources/read", "resources/subscribe"} {
			m := c.call(method, map[string]any{"uri": uri})
			if m.Error == nil || m.Error.Code != -32002 || !strings.Contains(m.Error.Message, "List resources first") {
				t.Errorf("%s %s: %s", method, uri, m.Line)
			}
		}
	}
	m := c.call("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "secret://secret-token-4/{x}"}, "argument": map[string]any{"name": "x", "value": ""}})
	if m.Error == nil {
		t.Errorf("completion of an unknown template: %s", m.Line)
	}
	for _, s := range []string{"everything", "memory", "files"} {
		b, err := os.ReadFile(logOf(s))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("secret-token")) {
			t.Errorf("an unlisted URI reached %s:\n%s", s, b)
		}
		if s != "everything" && bytes.Contains(b, []byte(doc)) {
			t.Errorf("everything's URI reached %s:\n%s", s, b)
		}
	}

	// A subscription gets its server's updates.
	if r := result(t, "subscribe", c.call("resources/subscribe", map[string]any{"uri": "memory://knowledge-graph"})); string(r) != `{}` {
		t.Errorf("subscribe: %s", r)
	}
	from := c.mark()
	call := decodeCall(t, c.call("tools/call", map[string]any{"name": "memory__create_entities", "arguments": map[string]any{
		"entities": []any{map[string]any{"name": "toolwarden", "entityType": "project", "observations": []string{"relays resources"}}},
	}}))
	if call.IsError {
		t.Fatalf("create_entities: %s", call.Text)
	}
	c.waitNote(from, "notifications/resources/updated", "memory://knowledge-graph")
	mustContain(t, string(result(t, "read the graph again", c.call("resources/read", map[string]any{"uri": "memory://knowledge-graph"}))), "relays resources")

	// A resource a tool makes: the server's list_changed reaches the
	// client, and the resource link it returns can be read (the proxy
	// lists again to find the URI).
	from = c.mark()
	call = decodeCall(t, c.call("tools/call", map[string]any{"name": "everything__gzip-file-as-resource", "arguments": map[string]any{
		"name": "hello.gz", "data": "data:text/plain,hello", "outputType": "resourceLink",
	}}))
	if call.IsError {
		t.Fatalf("gzip-file-as-resource: %s", call.Text)
	}
	c.waitNote(from, "notifications/resources/list_changed", "")
	blob := result(t, "read the new resource", c.call("resources/read", map[string]any{"uri": "demo://resource/session/hello.gz"}))
	mustContain(t, string(blob), `"blob"`)
}

// mcp-go's client, in both protocol eras, lists, gets, reads and completes
// through proxy mode: the results it decodes are the server's, renamed.
// (A 2026-07-28 client requires resultType and caching hints, which a
// 2025-11-25 server does not write; toolwarden adds them.)
func TestProxyPromptsAndResourcesWithMCPGoClients(t *testing.T) {
	t.Parallel()
	every := npmServer(t, "mcp-server-everything")
	cfg := writeFile(t, "proxy.toml", fmt.Sprintf("[mcp_servers.everything]\ncommand = %q\n", every))
	for _, legacy := range []bool{true, false} {
		name := "2026-07-28"
		if legacy {
			name = "2025-11-25"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := startGo(t, legacy, nil, twBin, proxyArgs(t, cfg)...)
			ctx := testContext(t)
			prompts, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
			if err != nil || len(prompts.Prompts) == 0 || prompts.Prompts[0].Name != "everything__simple-prompt" || prompts.NextCursor != "" {
				t.Fatalf("prompts/list: %+v %v", prompts, err)
			}
			got, err := c.GetPrompt(ctx, mcp.GetPromptRequest{Params: mcp.GetPromptParams{Name: "everything__args-prompt", Arguments: map[string]string{"city": "Oslo"}}})
			if err != nil || len(got.Messages) != 1 || !strings.Contains(toJSON(t, got.Messages[0].Content), "Oslo") {
				t.Fatalf("prompts/get: %+v %v", got, err)
			}
			resources, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
			if err != nil || len(resources.Resources) == 0 {
				t.Fatalf("resources/list: %+v %v", resources, err)
			}
			ttl, _ := resources.TTL()
			if legacy != (resources.ResultType == "") || legacy != (got.ResultType == "") || !legacy && (resources.CacheScope != "private" || ttl != 0) {
				t.Errorf("resultType %q (prompts/get %q), cacheScope %q, ttlMs %d: want them only for 2026-07-28", resources.ResultType, got.ResultType, resources.CacheScope, ttl)
			}
			templates, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
			if err != nil || len(templates.ResourceTemplates) != 2 {
				t.Fatalf("resources/templates/list: %+v %v", templates, err)
			}
			uri := resources.Resources[0].URI
			read, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: uri}})
			if err != nil || len(read.Contents) != 1 {
				t.Fatalf("resources/read %s: %+v %v", uri, read, err)
			}
			comp, err := c.Complete(ctx, mcp.CompleteRequest{Params: mcp.CompleteParams{
				Ref:      mcp.PromptReference{Type: "ref/prompt", Name: "everything__completable-prompt"},
				Argument: mcp.CompleteArgument{Name: "department", Value: "S"},
			}})
			if err != nil || strings.Join(comp.Completion.Values, ",") != "Sales,Support" {
				t.Fatalf("completion/complete: %+v %v", comp, err)
			}
			if _, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: "demo://unlisted"}}); err == nil {
				t.Fatal("an unlisted URI was read")
			}
		})
	}
}

// A server that is down is left out of merged lists, and a request routed
// to it gets an error that says it is unavailable; the other servers and
// tool calls still serve.
func TestProxyPromptsWhenAServerIsDown(t *testing.T) {
	t.Parallel()
	cfg := writeFile(t, "proxy.toml", fmt.Sprintf(`
[mcp_servers.good]
command = %q
args = ["-state", %q]

[mcp_servers.broken]
command = "/nonexistent/mcp-server"
startup_timeout_sec = 2
`, testServer, t.TempDir()))
	c := startRaw(t, twBin, proxyArgs(t, cfg)...)
	c.initialize("")
	for method, want := range map[string]string{"prompts/list": `{"prompts":[]}`, "resources/list": `{"resources":[]}`} {
		if got := result(t, method, c.call(method, map[string]any{})); string(got) != want {
			t.Errorf("%s: %s, want %s", method, got, want)
		}
	}
	m := c.call("prompts/get", map[string]any{"name": "broken__anything"})
	if m.Error == nil || m.Error.Code != -32603 || !strings.Contains(m.Error.Message, "broken is unavailable") {
		t.Errorf("prompts/get on a server that is down: %s", m.Line)
	}
	m = c.call("prompts/get", map[string]any{"name": "good__anything"})
	if m.Error == nil || m.Error.Code != -32601 || !strings.Contains(m.Error.Message, "does not offer prompts/get") {
		t.Errorf("prompts/get on a server without prompts: %s", m.Line)
	}
	r := decodeCall(t, c.call("tools/call", map[string]any{"name": "good__echo", "arguments": map[string]any{"message": "ok"}}))
	if r.IsError || r.Text != "echo: ok" {
		t.Fatalf("a tool call after them: %+v", r)
	}
}
