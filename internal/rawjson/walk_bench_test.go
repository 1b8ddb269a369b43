package rawjson

import (
	"strings"
	"testing"
)

// BenchmarkWalk measures the readers that run over validated text on the
// proxy's and the plugin host's paths: ReadMessage and Members on a
// tools/call and on a large result, and Canonical on a call's arguments
// (what signed approval state hashes). The pull reader is measured where
// it is used, by BenchmarkParseCheck (internal/plugin).
func BenchmarkWalk(b *testing.B) {
	call := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/home/me/src/notes.txt","content":"hello"},"_meta":{"progressToken":3}}}`)
	result := []byte(`{"jsonrpc":"2.0","id":8,"result":{"content":[` + strings.Repeat(`{"type":"text","text":"line of output with \"escapes\" and é\n"},`, 1000) + `{"type":"text","text":""}],"isError":false}}`)
	args := []byte(`{"path":"/home/me/src/notes.txt","content":"h\u00e9llo \"world\"","options":{"mode":"0644","tags":["a","b"]}}`)
	b.Run("message-call", func(b *testing.B) {
		for b.Loop() {
			m, _ := ReadMessage(call)
			Members(m.Params, func(k, v []byte) bool { return !KeyIs(k, "arguments") })
		}
	})
	b.Run("message-result", func(b *testing.B) {
		for b.Loop() {
			m, _ := ReadMessage(result)
			Members(m.Result, func(k, v []byte) bool {
				if KeyIs(k, "content") {
					Elements(v, func([]byte) bool { return true })
				}
				return true
			})
		}
	})
	b.Run("canonical", func(b *testing.B) {
		for b.Loop() {
			if _, err := Canonical(args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
