package serve

import (
	"encoding/json"
	"testing"
)

func TestClassifyTellsRequestsFromAnswersAndNotifications(t *testing.T) {
	t.Parallel()
	cases := []struct {
		body    string
		request bool
		id      string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{}}`, true, "7"},
		{`{"jsonrpc":"2.0","id":"a-1","method":"ping"}`, true, `"a-1"`},
		{`{"jsonrpc":"2.0","id":3,"result":{"action":"accept"}}`, false, "3"},
		{`{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}`, false, "3"},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, false, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"ping"}`, true, ""},    // a null id is not echoed
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, true, ""}, // nor a structure
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, true, ""},     // a batch costs like a request
		{`not json`, true, ""},          // so does junk
		{`{"jsonrpc":"2.0"}`, true, ""}, // and a message that is neither
	}
	for _, c := range cases {
		m := classify([]byte(c.body))
		if m.request != c.request || string(m.id) != c.id {
			t.Errorf("classify(%s) = request %v id %q, want %v %q", c.body, m.request, m.id, c.request, c.id)
		}
	}
}

// FuzzClassify: any body classifies without panicking, and an id it keeps
// is a JSON string or number that writeRPCError can echo.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":7,"method":"x"}`, `{"id":"\u0000"}`, `{"id":1e400}`, `{"id":-}`, `[]`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := classify(data)
		if m.id == nil {
			return
		}
		var v any
		if err := json.Unmarshal(m.id, &v); err != nil {
			t.Fatalf("kept id %q is not JSON: %v", m.id, err)
		}
		switch v.(type) {
		case string, float64:
		default:
			t.Fatalf("kept id %q is a %T", m.id, v)
		}
	})
}
