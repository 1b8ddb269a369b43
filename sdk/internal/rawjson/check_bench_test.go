package rawjson

import (
	"strings"
	"testing"
)

// BenchmarkCheck measures Check ("validator", a wrapper over
// policy.ValidateJSON) against the scanner it replaced ("baseline") in the
// same run, on messages the proxy relays: a tools/call, a large result,
// and a deeply nested one.
func BenchmarkCheck(b *testing.B) {
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/home/me/src/notes.txt","content":"hello"}}}`
	result := `{"jsonrpc":"2.0","id":8,"result":{"content":[` + strings.Repeat(`{"type":"text","text":"line of output with \"escapes\" and é\n"},`, 1000) + `{"type":"text","text":""}],"isError":false}}`
	deep := strings.Repeat(`{"a":[`, 2000) + "1" + strings.Repeat(`]}`, 2000)
	for _, in := range []struct{ name, msg string }{{"call", call}, {"result", result}, {"deep", deep}} {
		msg := []byte(in.msg)
		if baselineCheck(msg) != OK || Check(msg) != OK {
			b.Fatalf("%s: not OK", in.name)
		}
		for _, impl := range []struct {
			name  string
			check func([]byte) Status
		}{{"baseline", baselineCheck}, {"validator", Check}} {
			b.Run(in.name+"/"+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(msg)))
				b.ReportAllocs()
				for b.Loop() {
					if impl.check(msg) != OK {
						b.Fatal("not OK")
					}
				}
			})
		}
	}
}
