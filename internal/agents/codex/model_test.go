package codex

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// step is one turn of the scripted model: call a tool with arguments, or
// (Tool empty) answer with final text and end the turn.
type step struct {
	Tool string
	Args map[string]any
	Text string
}

// toolResult is one function_call_output Codex sent back to the model.
type toolResult struct {
	CallID string
	Output string // the output as the model reads it (outputText)
}

// request is one Responses API request the model server received, kept so
// a test can assert what the model saw.
type request struct {
	Tools      []string // every function tool offered, namespaced ones as namespaced names them
	Namespaces []string // the namespace tools offered, by name
	Results    []toolResult
	Raw        string
}

// model is a scripted OpenAI Responses API on 127.0.0.1, streaming as
// Codex reads it (SSE). Codex sends the whole conversation in every
// request (store = false), so the turn a request gets is the number of
// function calls its input already carries: a retried request gets the
// same turn again instead of shifting the script.
type model struct {
	t      testing.TB
	script []step
	srv    *httptest.Server

	mu       sync.Mutex
	requests []request
	unknown  []string
}

func newModel(t testing.TB, script ...step) *model {
	m := &model{t: t, script: script}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// BaseURL is the provider's base_url: Codex appends /responses.
func (m *model) BaseURL() string { return m.srv.URL + "/v1" }

func (m *model) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		m.responses(w, raw)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		// A provider's model list: an empty one keeps Codex on the model
		// the config names, with its built-in defaults.
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"list","data":[],"models":[]}`)
	default:
		m.mu.Lock()
		m.unknown = append(m.unknown, r.Method+" "+r.URL.String())
		m.mu.Unlock()
		http.NotFound(w, r)
	}
}

func (m *model) responses(w http.ResponseWriter, raw []byte) {
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := request{Raw: string(raw), Tools: offeredTools(body["tools"])}
	for _, tl := range asList(body["tools"]) {
		if t := asMap(tl); t["type"] == "namespace" {
			req.Namespaces = append(req.Namespaces, str(t["name"]))
		}
	}
	m.mu.Lock()
	script := m.script
	m.mu.Unlock()
	calls := 0
	for _, it := range asList(body["input"]) {
		item := asMap(it)
		switch item["type"] {
		case "function_call":
			calls++
		case "function_call_output":
			req.Results = append(req.Results, toolResult{CallID: str(item["call_id"]), Output: outputText(item["output"])})
		}
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	respID := fmt.Sprintf("resp_%d", len(m.Requests()))
	m.event(w, "response.created", map[string]any{"response": map[string]any{"id": respID}})
	if calls >= len(script) {
		m.message(w, fmt.Sprintf("script exhausted after %d steps", len(script)))
	} else if s := script[calls]; s.Tool == "" {
		m.message(w, s.Text)
	} else {
		args, _ := json.Marshal(s.Args)
		item := map[string]any{
			"type": "function_call", "id": fmt.Sprintf("fc_%d", calls), "call_id": fmt.Sprintf("call_%d", calls),
			"name": s.Tool, "arguments": string(args),
		}
		if ns, name, ok := splitNamespaced(body["tools"], s.Tool); ok {
			item["namespace"], item["name"] = ns, name
		}
		m.event(w, "response.output_item.done", map[string]any{"item": item})
	}
	m.event(w, "response.completed", map[string]any{"response": map[string]any{
		"id": respID,
		"usage": map[string]any{
			"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 110,
		},
	}})
}

func (m *model) message(w http.ResponseWriter, text string) {
	m.event(w, "response.output_item.done", map[string]any{"item": map[string]any{
		"type": "message", "role": "assistant", "id": "msg_1",
		"content": []any{map[string]any{"type": "output_text", "text": text}},
	}})
}

func (m *model) event(w http.ResponseWriter, typ string, fields map[string]any) {
	fields["type"] = typ
	b, _ := json.Marshal(fields)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

// Script sets the turns the model plays, before the agent starts.
func (m *model) Script(steps ...step) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.script = steps
}

// Requests returns a copy of what the model has received so far.
func (m *model) Requests() []request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]request(nil), m.requests...)
}

// Unknown lists requests to paths the model does not serve.
func (m *model) Unknown() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.unknown...)
}

// ResultFor returns the output Codex returned for the script's n-th call
// (0-based), and whether the model received one.
func (m *model) ResultFor(n int) (string, bool) {
	id := fmt.Sprintf("call_%d", n)
	for _, r := range m.Requests() {
		for _, res := range r.Results {
			if res.CallID == id {
				return res.Output, true
			}
		}
	}
	return "", false
}

// offeredTools flattens the request's tools into the names a model calls
// them by: a plain function by its name, a namespace's functions as
// namespace + name.
func offeredTools(v any) []string {
	var names []string
	for _, tl := range asList(v) {
		t := asMap(tl)
		switch t["type"] {
		case "function":
			names = append(names, str(t["name"]))
		case "namespace":
			for _, inner := range asList(t["tools"]) {
				names = append(names, namespaced(str(t["name"]), str(asMap(inner)["name"])))
			}
		}
	}
	return names
}

// namespaced is the one name a test uses for a tool offered inside a
// namespace: Codex 0.171 offers an MCP server's tools as namespace
// "mcp__fs" holding function "read_text_file", which the test calls
// mcp__fs__read_text_file.
func namespaced(ns, name string) string { return ns + "__" + name }

// splitNamespaced undoes namespaced for a tool the request offered in a
// namespace, so the call names the namespace and the function apart, as
// the Responses API returns a namespaced call.
func splitNamespaced(tools any, full string) (ns, name string, ok bool) {
	for _, tl := range asList(tools) {
		t := asMap(tl)
		if t["type"] != "namespace" {
			continue
		}
		for _, inner := range asList(t["tools"]) {
			if n := str(asMap(inner)["name"]); namespaced(str(t["name"]), n) == full {
				return str(t["name"]), n, true
			}
		}
	}
	return "", "", false
}

// outputText is a function_call_output as the model reads it: Codex sends
// a plain string, or (for an MCP tool error) a list of input_text items,
// whose texts are joined here so tests match words, not JSON escapes.
func outputText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var texts []string
	for _, it := range asList(v) {
		if t, ok := asMap(it)["text"].(string); ok {
			texts = append(texts, t)
		}
	}
	if len(texts) > 0 {
		return strings.Join(texts, "\n")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
