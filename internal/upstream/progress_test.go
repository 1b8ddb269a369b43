package upstream

import (
	"testing"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// progressLine reads lines an untrusted server wrote, after the
// connection's reader has checked that they are valid JSON (handle): on
// any such line it returns without panicking, and it relays the line only
// when its params.progressToken is one of a call in flight, byte for byte.
func FuzzProgressLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"other"}}`,
		`{"method":"notifications/progress","params":[1]}`,
		`{"params":{"progressToken":"t"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !rawjson.Valid(line) {
			return
		}
		var got [][]byte
		c := &Client{onProgress: func(l []byte) { got = append(got, l) }}
		c.watchProgress(&Pending{c: c, progress: `"t"`})
		c.watchProgress(&Pending{c: c, progress: `7`})
		c.progressLine(line)
		if len(got) > 1 || len(got) == 1 && string(got[0]) != string(line) {
			t.Fatalf("relayed %q for %q", got, line)
		}
	})
}

// Only progress for a token of a call in flight is relayed; a call that
// ended stops its relay.
func TestProgressIsRelayedOnlyForCallsInFlight(t *testing.T) {
	var got []string
	c := &Client{onProgress: func(l []byte) { got = append(got, string(l)) }}
	pd := &Pending{c: c, progress: `"t"`}
	c.watchProgress(pd)
	mine := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`
	other := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"u","progress":1}}`
	c.progressLine([]byte(mine))
	c.progressLine([]byte(other))
	c.unwatchProgress(pd)
	c.progressLine([]byte(mine))
	if len(got) != 1 || got[0] != mine {
		t.Fatalf("relayed %q", got)
	}
}
