package proxy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// The proxy reads calls and results without decoding them (rawjson); these
// are the encoding/json readers it replaced, kept as oracles: the fuzzers
// check both read every input the same way, except where encoding/json
// folds case (the intake's one reader matches keys exactly, as the upstream
// does, and refuses a message on which the two readings differ; parseCall,
// in reader_test.go, is the call the intake serves for a line).

type wireCall struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  *struct {
		Name           string          `json:"name"`
		Arguments      json.RawMessage `json:"arguments"`
		RequestState   string          `json:"requestState"`
		InputResponses json.RawMessage `json:"inputResponses"`
		Meta           struct {
			ProgressToken   json.RawMessage `json:"progressToken"`
			ProtocolVersion string          `json:"io.modelcontextprotocol/protocolVersion"`
			Capabilities    *struct {
				Elicitation json.RawMessage `json:"elicitation"`
			} `json:"io.modelcontextprotocol/clientCapabilities"`
		} `json:"_meta"`
	} `json:"params"`
}

func parseCallJSON(line []byte) (*callRequest, bool) {
	var w wireCall
	if json.Unmarshal(line, &w) != nil || w.Method != string(mcp.MethodToolsCall) || !rawjson.IsID(w.ID) || w.Params == nil || w.Params.Name == "" ||
		(w.JSONRPC != nil && w.JSONRPC[0] != '"') {
		return nil, false
	}
	pm := w.Params
	r := &callRequest{ID: w.ID, Name: pm.Name, Arguments: pm.Arguments, RequestState: pm.RequestState, InputResponses: pm.InputResponses}
	if mcp.IsModernProtocol(pm.Meta.ProtocolVersion) {
		r.Modern = true
		if c := pm.Meta.Capabilities; c != nil && len(c.Elicitation) > 0 && string(c.Elicitation) != "null" {
			var ec mcp.ElicitationCapability
			r.Elicit = json.Unmarshal(c.Elicitation, &ec) == nil && formMode(&ec)
		}
	}
	if string(r.InputResponses) == "null" {
		r.InputResponses = nil
	}
	if len(pm.Meta.ProgressToken) > 0 && string(pm.Meta.ProgressToken) != "null" {
		r.Progress = pm.Meta.ProgressToken
	}
	return r, true
}

func summarizeJSON(raw json.RawMessage) (text string, isError, ok bool) {
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", false, false
	}
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Text)
		}
	}
	if b.Len() == 0 && len(r.StructuredContent) > 0 && string(r.StructuredContent) != "null" {
		return string(r.StructuredContent), r.IsError, true
	}
	return b.String(), r.IsError, true
}

// duplicateKeys reports whether some object in b repeats a key (as
// encoding/json matches keys: case-insensitively). encoding/json merges
// repeated objects into one value and the proxy's reader takes the last
// one whole; both are defensible, neither is what a JavaScript client
// sees, and host policy refuses such arguments anyway.
func duplicateKeys(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false
				}
				key := foldKey(k.(string))
				if seen[key] {
					return true
				}
				seen[key] = true
				if walk() {
					return true
				}
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			_, _ = dec.Token()
		}
		return false
	}
	return walk()
}

// foldKey maps every rune of s to the least of its case-folding orbit,
// so that two keys fold to one iff bytes.EqualFold says they are equal.
func foldKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		min := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < min {
				min = f
			}
		}
		b.WriteRune(min)
	}
	return b.String()
}

// callKeys are the keys parseCall reads.
var callKeys = append(append(append(append([]string{}, envelopeKeys...), paramKeys...), metaKeys...), "elicitation")

// foldedKeys reports whether some object in b has a key that is one of
// keys to encoding/json (case folded) but not exactly.
func foldedKeys(b []byte, keys ...string) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type level struct{ object, wantKey bool }
	var stack []level
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{object: true, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			k, _ := tok.(string)
			for _, want := range keys {
				if k != want && strings.EqualFold(k, want) {
					return true
				}
			}
			stack[n-1].wantKey = false
			continue
		}
		valueDone()
	}
}

// foldedProtocolKeys reports whether the top level, params or params._meta
// of a message has a key that case-folds to one parseCall reads.
func foldedProtocolKeys(line []byte) bool {
	// Each level is judged against the keys read at that level: a
	// "CApABilities" inside _meta folds into a params key, but nothing
	// reads a capabilities member of _meta, so it is no near miss there.
	folded := func(raw json.RawMessage, keys []string) (map[string]json.RawMessage, bool) {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			return nil, false
		}
		for k := range m {
			for _, want := range keys {
				if k != want && strings.EqualFold(k, want) {
					return m, true
				}
			}
		}
		return m, false
	}
	top, bad := folded(line, envelopeKeys)
	if bad {
		return true
	}
	params, bad := folded(top["params"], paramKeys)
	if bad {
		return true
	}
	_, bad = folded(params["_meta"], metaKeys)
	return bad
}

var callSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","_meta":{"progressToken":"t","PROGRESSTOKEN":7},"_meta":null}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e","_meta":{"progressToken":null}}}`,
	`{"id":"a","method":"tools/call","params":{"name":"e","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}}}`,
	`{"ID":2,"Method":"tools\/call","PARAMS":{"Name":"\u0065","requeststate":"s","inputResponses":null}}`,
	`{"id":3,"method":"tools/call","params":{"name":"e"},"params":null}`,
	`{"id":3,"method":"tools/call","method":null,"params":{"name":"e","name":null}}`,
	`{"id":3,"method":"tools/call","params":{"name":5}}`,
	`{"id":null,"method":"tools/call","params":{"name":"e"}}`,
	`[{"id":1}]`, `null`, `{}`, `{"id":1,"method":"tools/list"}`,
}

func FuzzParseCallAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range callSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, gotOK := parseCall(line)
		want, wantOK := parseCallJSON(line)
		if json.Valid(line) && (duplicateKeys(line) || foldedKeys(line, callKeys...)) {
			if gotOK && foldedProtocolKeys(line) {
				t.Fatalf("parseCall(%q) took a call with a case-folded protocol key", line)
			}
			return
		}
		if gotOK != wantOK {
			t.Fatalf("parseCall(%q) ok = %v, encoding/json says %v", line, gotOK, wantOK)
		}
		if !gotOK {
			return
		}
		if string(got.ID) != string(want.ID) || got.Name != want.Name || string(got.Arguments) != string(want.Arguments) ||
			got.RequestState != want.RequestState || string(got.InputResponses) != string(want.InputResponses) ||
			got.Modern != want.Modern || got.Elicit != want.Elicit || string(got.Progress) != string(want.Progress) {
			t.Fatalf("parseCall(%q)\n got %+v\nwant %+v", line, got, want)
		}
	})
}

var resultSeeds = []string{
	`{"content":[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}]}`,
	`{"content":[],"structuredContent":{"x":1},"isError":true}`,
	`{"CONTENT":[{"TYPE":"text","Text":"\u0061"}],"iserror":null}`,
	`{"content":[null,{"type":null,"text":null}],"structuredContent":null}`,
	`{"content":"x"}`, `{"content":[1]}`, `{"content":[{"type":1}]}`, `{"isError":"yes"}`,
	`null`, `[]`, `"x"`, `{}`,
}

func FuzzSummarizeAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range resultSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		raw = bytes.TrimSpace(raw)
		if !json.Valid(raw) || duplicateKeys(raw) || foldedKeys(raw, "content", "structuredContent", "isError", "type", "text") {
			return // results come from a validated line; keys match exactly
		}
		text, isErr, ok := summarize(raw, true)
		wText, wIsErr, wOK := summarizeJSON(raw)
		if ok != wOK || (ok && (text != wText || isErr != wIsErr)) {
			t.Fatalf("summarize(%q) = %q %v %v, encoding/json says %q %v %v", raw, text, isErr, ok, wText, wIsErr, wOK)
		}
		if _, isErr2, ok2 := summarize(raw, false); ok2 != ok || isErr2 != isErr {
			t.Fatalf("summarize(%q) without text = %v %v, with text %v %v", raw, isErr2, ok2, isErr, ok)
		}
	})
}

func TestReadersAgreeWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range callSeeds {
		if foldedKeys([]byte(s), callKeys...) || duplicateKeys([]byte(s)) {
			continue
		}
		got, gotOK := parseCall([]byte(s))
		want, wantOK := parseCallJSON([]byte(s))
		if gotOK != wantOK || (gotOK && (got.Name != want.Name || string(got.ID) != string(want.ID))) {
			t.Errorf("parseCall(%s) = %+v %v, want %+v %v", s, got, gotOK, want, wantOK)
		}
	}
	for _, s := range resultSeeds {
		if foldedKeys([]byte(s), "content", "structuredContent", "isError", "type", "text") {
			continue
		}
		text, isErr, ok := summarize(json.RawMessage(s), true)
		wText, wIsErr, wOK := summarizeJSON(json.RawMessage(s))
		if ok != wOK || text != wText || isErr != wIsErr {
			t.Errorf("summarize(%s) = %q %v %v, want %q %v %v", s, text, isErr, ok, wText, wIsErr, wOK)
		}
	}
}
