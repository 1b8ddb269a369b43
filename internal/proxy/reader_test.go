package proxy

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// intakeReads is what the intake makes of one line from the client: the
// one reading (readMessage), whether it was answered or dropped before
// being served (refuse), and what mcp-go is handed when the proxy does not
// serve it itself.
func intakeReads(line []byte) (m *message, refused bool) {
	p, _ := screenProxy()
	in := &intake{p: p, out: p.out}
	m = readMessage(line)
	return m, in.refuse(m) == consumed
}

// parseCall is the call the intake serves for a line, if it serves one.
func parseCall(line []byte) (*callRequest, bool) {
	m, refused := intakeReads(line)
	r := new(callRequest)
	if refused || !m.isCall() || !m.call(r) {
		return nil, false
	}
	return r, true
}

// parsePassRequest is the request the intake passes through for a line,
// if it passes one.
func parsePassRequest(line []byte) (*passRequest, bool) {
	m, refused := intakeReads(line)
	if refused || m.isCall() {
		return nil, false
	}
	return passRequestOf(m)
}

// mcpGoMessage is how mcp-go reads a message it is handed (encoding/json,
// which folds case and takes the last of duplicate keys).
type mcpGoMessage struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

// Every message the intake lets through has one reading: what mcp-go reads
// of the bytes it is handed is, member by member, what the proxy's reader
// read; a call the proxy serves is never handed to mcp-go; and what the
// reader read agrees with a strict reference reader (encoding/json into
// exact-key maps, on a message without duplicate or case-folded keys).
func FuzzEveryMessageHasOneReading(f *testing.F) {
	for _, s := range append(callSeeds,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","METHOD":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","Id":2}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"requestID":2}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"action":"accept"},"Result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","x":{"method":"tools/call"}}`,
		`{"jsonrpc":"2.0","\u0069d":3,"m\u0065thod":"tools/list"}`,
	) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, refused := intakeReads(line)
		if refused {
			return
		}
		if m.isCall() {
			if _, ok := parseCall(line); !ok {
				t.Fatalf("a call the intake neither refused nor serves: %q", line)
			}
			return // served by the proxy: mcp-go never sees it
		}
		var got mcpGoMessage
		handed := m.forMCPGo()
		if err := json.Unmarshal(handed, &got); err != nil {
			t.Fatalf("mcp-go cannot read %q, handed for %q: %v", handed, line, err)
		}
		for i, v := range [][]byte{got.JSONRPC, got.ID, got.Method, got.Params, got.Result, got.Error} {
			if string(v) != string(m.members[i]) {
				t.Fatalf("for %q mcp-go reads %s = %s, the proxy read %s", line, envelopeKeys[i], v, m.members[i])
			}
		}
		if duplicateKeys(line) || foldedKeys(line, envelopeKeys...) {
			return // the reference reader would read it another way; it must have been refused
		}
		var ref map[string]json.RawMessage
		if json.Unmarshal(line, &ref) != nil {
			t.Fatalf("the intake let through what is not a JSON object: %q", line)
		}
		for i, k := range envelopeKeys {
			if string(ref[k]) != string(m.members[i]) {
				t.Fatalf("for %q the reference reads %s = %s, the proxy read %s", line, k, ref[k], m.members[i])
			}
		}
		if s, ok := rawjson.String(m.members[keyMethod]); ok && rawjson.Kind(m.members[keyMethod]) == '"' && s != m.method {
			t.Fatalf("for %q the method is %q, the proxy read %q", line, s, m.method)
		}
	})
}

// Before the fix, the client's first message was read for its
// capabilities by a reader that folds case, before the message was judged:
// an initialize refused for an ambiguous key still told every upstream
// what the smuggled "Params" claimed. The reader now reads the message
// once, and a refused message tells the upstreams nothing.
func TestARefusedFirstMessageTellsTheUpstreamsNothing(t *testing.T) {
	t.Parallel()
	var caps mcp.ClientCapabilities
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}},"Params":{"capabilities":{"roots":{},"sampling":{}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"Capabilities":{"roots":{}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"capabilities":{"roots":{}}}}`,
	} {
		m, refused := intakeReads([]byte(line))
		if !refused {
			t.Fatalf("not refused: %s", line)
		}
		if m.readCapabilities(&caps) {
			t.Fatalf("a refused initialize was read for capabilities %+v: %s", caps, line)
		}
	}
	m, refused := intakeReads([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{"roots":{"listChanged":true}}}}`))
	if refused || !m.readCapabilities(&caps) || caps.Roots == nil {
		t.Fatalf("a well-formed initialize: refused %v, capabilities %+v", refused, caps)
	}
}
