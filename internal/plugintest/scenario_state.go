package plugintest

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"

	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/session"
)

// scenarioState is a stateful plugin's state through a scenario (pdk/ABI.md
// section 12): sent with every check and observe step, updated from their
// outputs by the session code the host uses, bounds and all.
type scenarioState struct {
	slot *session.PluginSlot
}

// newScenarioState is nil for a plugin that did not ask for state in
// describe: the host sends such a plugin none.
func newScenarioState(p *plugin.Plugin, s *scenarioSession, initial json.RawMessage) (*scenarioState, error) {
	if !p.Stateful() {
		if len(initial) > 0 {
			return nil, fmt.Errorf("state: the plugin did not ask for state in describe (\"state\": true), so it gets none")
		}
		return nil, nil
	}
	var id string
	_ = json.Unmarshal(s.members["id"], &id)
	st := &scenarioState{slot: session.NewStore(nil).Get(id).Plugin(p.Name())}
	if len(initial) > 0 {
		var want session.PluginState
		if err := decodeStrict(initial, &want); err != nil {
			return nil, fmt.Errorf("state: %v", err)
		}
		if _, err := st.slot.Apply(session.StateUpdate{Add: want.Counters, Set: want.Entries}); err != nil {
			return nil, fmt.Errorf("state: %v", err)
		}
	}
	return st, nil
}

// json is the envelope's "state" member, in the host's form: both maps,
// keys sorted (encoding/json sorts map keys).
func (st *scenarioState) json() json.RawMessage {
	cur := st.slot.State()
	b, _ := json.Marshal(struct {
		Counters map[string]int64  `json:"counters"`
		Entries  map[string]string `json:"entries"`
	}{orEmptyMap(cur.Counters), orEmptyMap(cur.Entries)})
	return b
}

func orEmptyMap[V any](m map[string]V) map[string]V {
	if m == nil {
		return map[string]V{}
	}
	return m
}

// apply reads an output's "state" update and applies it as the host does:
// whole, or not at all with an error that fails the event.
func (st *scenarioState) apply(out []byte) error {
	if len(out) == 0 {
		return nil
	}
	var o struct {
		State *struct {
			Add    map[string]json.Number `json:"add"`
			Set    map[string]string      `json:"set"`
			Delete []string               `json:"delete"`
		} `json:"state"`
	}
	if err := json.Unmarshal(out, &o); err != nil {
		return fmt.Errorf("bad output: \"state\": %v", err)
	}
	if o.State == nil {
		return nil
	}
	u := session.StateUpdate{Set: o.State.Set, Delete: o.State.Delete}
	for k, n := range o.State.Add {
		v, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil {
			return fmt.Errorf("bad output: \"state.add.%s\": %s is not an integer in the int64 range", k, n)
		}
		if u.Add == nil {
			u.Add = map[string]int64{}
		}
		u.Add[k] = v
	}
	if len(u.Delete) > session.MaxStateKeys {
		return fmt.Errorf("bad output: \"state.delete\": more than %d keys", session.MaxStateKeys)
	}
	if _, err := st.slot.Apply(u); err != nil {
		return fmt.Errorf("bad output: %v", err)
	}
	return nil
}

// check compares the state after a step with what is expected of it.
func (st *scenarioState) check(want *session.PluginState) []string {
	if st == nil {
		return []string{"state: the plugin did not ask for state in describe (\"state\": true), so it has none"}
	}
	got := st.slot.State()
	if !maps.Equal(orEmptyMap(got.Counters), orEmptyMap(want.Counters)) || !maps.Equal(orEmptyMap(got.Entries), orEmptyMap(want.Entries)) {
		return []string{fmt.Sprintf("state: want counters %v entries %v, got counters %v entries %v",
			orEmptyMap(want.Counters), orEmptyMap(want.Entries), orEmptyMap(got.Counters), orEmptyMap(got.Entries))}
	}
	return nil
}
