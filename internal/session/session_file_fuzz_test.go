package session

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeState: any bytes are refused or read as a state whose plugin
// states keep the bounds an update keeps; what is read writes back to bytes
// that read as the same state, so a Save never turns a loadable session
// file into one that is refused.
func FuzzDecodeState(f *testing.F) {
	f.Add([]byte(`{"version":1,"id":"s","counters":{}}`))
	f.Add([]byte(`{"version":1,"id":"s","pins":[{"server":"fs","tool":"read","definition_hash":"ab"}],"labels":["secret"],"counters":{},"plugins":{"guard":{"counters":{"n":3},"entries":{"k":"v"}}}}`))
	f.Add([]byte(`{"version":1,"plugins":{"p":{"counters":{"k":1},"entries":{"k":"v"}}}}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"plugins":{"p":{"entries":{"":"v"}}}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeState(data)
		if err != nil {
			return
		}
		if st.Version != 1 {
			t.Fatalf("read version %d", st.Version)
		}
		for name, ps := range st.Plugins {
			if err := checkPluginState(ps); err != nil {
				t.Fatalf("plugin %q read past its bounds: %v", name, err)
			}
		}
		out, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeState(out)
		if err != nil {
			t.Fatalf("written state %s is refused: %v", out, err)
		}
		if !reflect.DeepEqual(normState(st), normState(again)) {
			t.Fatalf("state changed on write:\n%+v\n%+v", st, again)
		}
	})
}

// normState reads a state through JSON once, so nil and empty collections
// (which omitempty writes alike) compare equal.
func normState(st State) string {
	b, _ := json.Marshal(st)
	return string(b)
}
