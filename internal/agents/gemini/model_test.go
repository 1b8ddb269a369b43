package gemini

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
)

// turn is one answer of the scripted model: a function call, or (when
// Call is empty) the final text.
type turn struct {
	Call string         // the function's name as Gemini CLI offers it (mcp_fs_read_text_file)
	Args map[string]any // its arguments
	Text string         // the final answer
}

// request is one generate request the agent sent, as received.
type request struct {
	Path string
	Body genRequest
	Raw  []byte
}

// genRequest is the part of a Gemini API GenerateContentRequest the tests
// read: the conversation and the tools offered.
type genRequest struct {
	Contents []content `json:"contents"`
	Tools    []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

type content struct {
	Role  string `json:"role"`
	Parts []part `json:"parts"`
}

type part struct {
	Text             string          `json:"text,omitempty"`
	FunctionCall     json.RawMessage `json:"functionCall,omitempty"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse,omitempty"`
}

// model is a scripted Gemini API (generativelanguage.googleapis.com) on
// 127.0.0.1, at the base URL Gemini CLI reads from GOOGLE_GEMINI_BASE_URL.
// The conversation (streamGenerateContent, server-sent events) is answered
// from the script, one turn per request; Gemini CLI's side requests (a
// JSON-schema generateContent for routing or its next-speaker check,
// countTokens) are answered minimally. Every request is recorded.
type model struct {
	srv    *httptest.Server
	mu     sync.Mutex
	script []turn
	next   int
	chat   []request // streamGenerateContent: the conversation
	side   []request // anything else
	stray  []string  // requests the script cannot answer, and why
}

func newModel(t testing.TB, script ...turn) *model {
	m := &model{script: script}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *model) URL() string { return m.srv.URL }

func (m *model) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := request{Path: r.URL.Path, Raw: raw}
	// Paths are /v1beta/models/<model>:<method>.
	method := r.URL.Path[strings.LastIndexByte(r.URL.Path, ':')+1:]
	if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/") {
		if err := json.Unmarshal(raw, &req.Body); err != nil {
			m.strayed(r.URL.Path + ": not a GenerateContentRequest: " + err.Error())
			http.Error(w, "not a GenerateContentRequest: "+err.Error(), http.StatusBadRequest)
			return
		}
		switch method {
		case "streamGenerateContent":
			m.stream(w, req)
			return
		case "generateContent":
			m.sideAnswer(w, req)
			return
		case "countTokens":
			m.record(&m.side, req)
			writeJSON(w, map[string]any{"totalTokens": len(raw) / 4})
			return
		}
	}
	m.strayed(r.Method + " " + r.URL.String())
	http.Error(w, "the scripted model does not serve "+r.URL.Path, http.StatusNotFound)
}

func (m *model) strayed(what string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stray = append(m.stray, what)
}

func (m *model) record(into *[]request, req request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*into = append(*into, req)
}

// stream answers one conversation request with the script's next turn, as
// the Gemini API streams: "data: <GenerateContentResponse>" events.
func (m *model) stream(w http.ResponseWriter, req request) {
	m.mu.Lock()
	m.chat = append(m.chat, req)
	var tn turn
	if m.next < len(m.script) {
		tn = m.script[m.next]
		m.next++
	} else {
		// The script is spent: say so to the test, and end the
		// conversation rather than loop.
		m.stray = append(m.stray, "a conversation request after the script's last turn")
		tn = turn{Text: "script exhausted"}
	}
	m.mu.Unlock()

	var p map[string]any
	if tn.Call != "" {
		p = map[string]any{"functionCall": map[string]any{"name": tn.Call, "args": tn.Args}}
	} else {
		p = map[string]any{"text": tn.Text}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	b, _ := json.Marshal(response(p))
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
}

// sideAnswer answers a non-streamed generateContent. Gemini CLI sends
// these for utility calls that want JSON (model routing, the
// next-speaker check); one object satisfies each schema it validates
// against, since it ignores unknown keys. Its answer: a simple task, and
// the user speaks next.
func (m *model) sideAnswer(w http.ResponseWriter, req request) {
	m.record(&m.side, req)
	text := `{"complexity_reasoning":"scripted","complexity_score":10,"reasoning":"scripted","model_choice":"flash","next_speaker":"user"}`
	writeJSON(w, response(map[string]any{"text": text}))
}

func response(p map[string]any) map[string]any {
	return map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{p}},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  "scripted",
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// requests returns copies of what was recorded.
func (m *model) requests() (chat, side []request, stray []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]request(nil), m.chat...), append([]request(nil), m.side...), append([]string(nil), m.stray...)
}

// offered is the function names each conversation request offered, in
// the order the requests came.
func (m *model) offered() [][]string {
	chat, _, _ := m.requests()
	out := make([][]string, len(chat))
	for i, req := range chat {
		for _, t := range req.Body.Tools {
			for _, f := range t.FunctionDeclarations {
				out[i] = append(out[i], f.Name)
			}
		}
	}
	return out
}

// toolResult is the text of the function response the model received for
// the script's call of name: the strings of the response object. ok is
// false if the model never received one.
func (m *model) toolResult(name string) (text string, ok bool) {
	chat, _, _ := m.requests()
	for _, req := range chat {
		for _, c := range req.Body.Contents {
			for _, p := range c.Parts {
				if p.FunctionResponse != nil && p.FunctionResponse.Name == name {
					text = unnest(strings.Join(leaves(p.FunctionResponse.Response), "\n"))
					ok = true
				}
			}
		}
	}
	return text, ok
}

// leaves are the strings in a JSON value, in order: the text of a function
// response as the model reads it, without JSON's escapes.
func leaves(raw json.RawMessage) []string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return []string{string(raw)}
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		}
	}
	walk(v)
	return out
}

// unnest undoes one level of JSON string escaping. Gemini CLI reports an
// MCP tool error to the model as a sentence that embeds the server's
// response as JSON text, so the server's own text arrives escaped once.
func unnest(s string) string {
	return strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\n`, "\n").Replace(s)
}
