package claudecode

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

// step is one turn of the scripted model: call tools (several at once, as
// a model may), or (Calls empty) answer with final text and end the turn.
type step struct {
	Calls []toolCall
	Text  string
}

// toolCall is one tool_use block of a step.
type toolCall struct {
	Tool string
	Args map[string]any
}

// calls is a step that calls tools.
func calls(c ...toolCall) step { return step{Calls: c} }

// request is one Messages API request the model server received, kept so
// a test can assert what the model saw.
type request struct {
	Model string
	Tools []string // names of the tools offered
	Body  map[string]any
}

// model is a scripted Anthropic Messages API on 127.0.0.1. The turn a
// request gets is the number of assistant messages the conversation it
// carries already holds, so Claude Code's retries and side requests never
// shift the script.
type model struct {
	script []step
	srv    *httptest.Server

	mu       sync.Mutex
	requests []request
	unknown  []string
}

func newModel(t testing.TB, script ...step) *model {
	m := &model{script: script}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *model) URL() string { return m.srv.URL }

// unknownRequests are the requests the model does not serve ("METHOD
// URL"): anything Claude Code tried to reach but the Messages API.
func (m *model) unknownRequests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.unknown...)
}

func (m *model) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	switch r.URL.Path {
	case "/v1/messages":
		m.messages(w, raw)
	case "/v1/messages/count_tokens":
		// Claude Code counts tokens to size its context; any count will do.
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"input_tokens":100}`)
	default:
		m.mu.Lock()
		m.unknown = append(m.unknown, r.Method+" "+r.URL.String())
		m.mu.Unlock()
		http.NotFound(w, r)
	}
}

func (m *model) messages(w http.ResponseWriter, raw []byte) {
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, "bad JSON: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := request{Body: body}
	req.Model, _ = body["model"].(string)
	for _, tl := range asList(body["tools"]) {
		if name, ok := asMap(tl)["name"].(string); ok {
			req.Tools = append(req.Tools, name)
		}
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()

	st, turn := m.stepFor(body, req.Tools)
	stream, _ := body["stream"].(bool)
	if stream {
		writeStream(w, req.Model, st, turn)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(message(req.Model, st, turn))
}

// stepFor picks the script's step for a request, and its turn. A side
// request (title, topic or quota check: no tools offered) gets a short
// text answer.
func (m *model) stepFor(body map[string]any, tools []string) (step, int) {
	if len(tools) == 0 {
		return step{Text: "ok"}, -1
	}
	// Each assistant message of the conversation is one scripted turn
	// (each has its own message id, so Claude Code keeps them apart).
	turn := 0
	for _, msg := range asList(body["messages"]) {
		if asMap(msg)["role"] == "assistant" {
			turn++
		}
	}
	if turn < len(m.script) {
		return m.script[turn], turn
	}
	return step{Text: "done"}, turn
}

// mainRequests are the requests of the conversation itself (tools
// offered), in order.
func (m *model) mainRequests() []request {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []request
	for _, r := range m.requests {
		if len(r.Tools) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// toolsOffered is the tool list of the conversation's first request.
func (m *model) toolsOffered(t testing.TB) []string {
	t.Helper()
	rs := m.mainRequests()
	if len(rs) == 0 {
		t.Fatalf("the model got no request offering tools; unknown requests: %v", m.unknownRequests())
	}
	return rs[0].Tools
}

// toolResult returns the text of the tool_result the model received for
// call i of turn, and whether it was marked is_error.
func (m *model) toolResult(t testing.TB, turn, i int) (string, bool) {
	t.Helper()
	id := toolUseID(turn, i)
	for _, r := range m.mainRequests() {
		for _, msg := range asList(r.Body["messages"]) {
			for _, c := range asList(asMap(msg)["content"]) {
				cm := asMap(c)
				if cm["type"] != "tool_result" || cm["tool_use_id"] != id {
					continue
				}
				isErr, _ := cm["is_error"].(bool)
				return contentText(cm["content"]), isErr
			}
		}
	}
	t.Fatalf("the model never received a result for call %d of turn %d (%v); requests: %d", i, turn, m.script[turn], len(m.mainRequests()))
	return "", false
}

// contentText flattens a tool_result's content (a string or a list of
// text blocks).
func contentText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b strings.Builder
	for _, c := range asList(v) {
		if s, ok := asMap(c)["text"].(string); ok {
			b.WriteString(s)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// toolUseID is the id the model gives call i of turn: unique in the
// conversation, as the API's are, so a result is found by its turn.
func toolUseID(turn, i int) string {
	return fmt.Sprintf("toolu_scripted_%02d_%d", turn, i)
}

func message(model string, st step, turn int) map[string]any {
	msg := map[string]any{
		// Claude Code joins assistant messages that share an id into one:
		// each turn's message has its own.
		"id": fmt.Sprintf("msg_scripted_%02d", turn), "type": "message",
		"role": "assistant", "model": model, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 10, "output_tokens": 5},
	}
	var content []any
	for i, c := range st.Calls {
		content = append(content, map[string]any{"type": "tool_use", "id": toolUseID(turn, i), "name": c.Tool, "input": c.Args})
	}
	msg["stop_reason"] = "tool_use"
	if len(st.Calls) == 0 {
		content = []any{map[string]any{"type": "text", "text": st.Text}}
		msg["stop_reason"] = "end_turn"
	}
	msg["content"] = content
	return msg
}

// writeStream answers as the Messages API streams: message_start, per
// content block (text, or a tool_use whose input comes as one
// input_json_delta) its start, delta and stop, then message_delta with
// the stop reason and message_stop.
func writeStream(w http.ResponseWriter, model string, st step, turn int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	whole := message(model, st, turn)
	start := message(model, st, turn)
	start["content"] = []any{}
	start["stop_reason"] = nil
	event(w, "message_start", map[string]any{"type": "message_start", "message": start})
	for i, b := range asList(whole["content"]) {
		block := asMap(b)
		var delta map[string]any
		if block["type"] == "tool_use" {
			args, _ := json.Marshal(block["input"])
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(args)}
			block = map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}
		} else {
			delta = map[string]any{"type": "text_delta", "text": block["text"]}
			block = map[string]any{"type": "text", "text": ""}
		}
		event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": block})
		event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
		event(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": whole["stop_reason"], "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	event(w, "message_stop", map[string]any{"type": "message_stop"})
}

func event(w http.ResponseWriter, name string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
