package plugin

import (
	"encoding/json"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/session"
)

// Whatever a guest answers, a state update is refused or applied within
// the bounds, and the state it leaves is rendered into the next envelope
// as JSON that reads back as the same state.
func FuzzStateUpdate(f *testing.F) {
	for _, seed := range []string{
		`{"decision":"allow","state":{"add":{"calls":1}}}`,
		`{"state":{"set":{"k":"v"},"delete":["x"],"add":{"n":-3}}}`,
		`{"state":{"add":{"n":9223372036854775807}}}`,
		`{"state":{"add":{"n":1.5}}}`,
		`{"state":{"set":{"":"v"}}}`,
		`{"state":{"set":{"k\u0000":"\ud800"}}}`,
		`{"state":null}`,
		`{"state":{"add":{"a":1},"add":{"b":2}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		u, err := parseStateUpdate(out)
		if err != nil || u == nil {
			return
		}
		slot := session.NewStore(nil).Get("s").Plugin("p")
		st, err := slot.Apply(*u)
		if err != nil {
			if !slot.State().Empty() {
				t.Fatalf("a refused update changed the state: %+v", slot.State())
			}
			return
		}
		if n := len(st.Counters) + len(st.Entries); n > session.MaxStateKeys {
			t.Fatalf("%d keys", n)
		}
		for k, v := range st.Entries {
			if len(k) > session.MaxStateKey || len(v) > session.MaxStateValue || !utf8.ValidString(v) {
				t.Fatalf("entry %q = %q breaks a bound", k, v)
			}
		}
		env := append([]byte("{"), appendState(nil, st)[1:]...)
		env = append(env, '}')
		var back struct{ State session.PluginState }
		if err := json.Unmarshal(env, &back); err != nil {
			t.Fatalf("envelope state is not JSON: %v\n%s", err, env)
		}
		norm := func(p session.PluginState) session.PluginState {
			if len(p.Counters) == 0 {
				p.Counters = nil
			}
			if len(p.Entries) == 0 {
				p.Entries = nil
			}
			return p
		}
		if !reflect.DeepEqual(norm(back.State), norm(st)) {
			t.Fatalf("envelope state reads back as %+v, want %+v", back.State, st)
		}
	})
}
