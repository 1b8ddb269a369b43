package upstream

import (
	"context"
	"encoding/json"
	"testing"
)

// The trace context serve hands a call reaches the upstream in _meta, on
// both transports' encodings, beside the client's progress token, and a
// member cannot replace the progress token or break out of its string.
func TestMetaMembersJoinTheProgressTokenInTheCallsMeta(t *testing.T) {
	ctx := WithMeta(context.Background(), map[string]string{
		"traceparent":   "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"tracestate":    `a=1","progressToken":"stolen`,
		"progressToken": "replaced",
	})
	extra := metaFrom(ctx)
	for name, line := range map[string][]byte{
		"stdio line":  appendCallLine(nil, 7, "read_file", json.RawMessage(`{"path":"/x"}`), `"tok"`, extra),
		"http params": mustMarshal(t, callParams{Name: "read_file", Arguments: json.RawMessage(`{"path":"/x"}`), Meta: metaObject(`"tok"`, extra)}),
	} {
		var req struct {
			Params struct {
				Name string            `json:"name"`
				Meta map[string]string `json:"_meta"`
			} `json:"params"`
			Name string            `json:"name"`
			Meta map[string]string `json:"_meta"`
		}
		if err := json.Unmarshal(line, &req); err != nil {
			t.Fatalf("%s %s: %v", name, line, err)
		}
		meta := req.Params.Meta
		if meta == nil {
			meta = req.Meta
		}
		if meta["traceparent"] != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" || meta["progressToken"] != "tok" || meta["tracestate"] != `a=1","progressToken":"stolen` || len(meta) != 3 {
			t.Errorf("%s: _meta = %v in %s", name, meta, line)
		}
	}
	if got := appendCallLine(nil, 1, "t", nil, "", ""); string(got) != `{"jsonrpc":"2.0","id":"tw-1","method":"tools/call","params":{"name":"t"}}`+"\n" {
		t.Errorf("a call with no meta has a _meta: %s", got)
	}
	if metaObject("", "") != nil || metaFrom(WithMeta(context.Background(), nil)) != "" {
		t.Error("no members, yet a _meta")
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
