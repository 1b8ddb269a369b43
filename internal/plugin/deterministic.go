package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/toolwarden/toolwarden/internal/policy"
)

// A plugin that declares "deterministic": true at describe (pdk/ABI.md
// section 15) promises that its check output depends on nothing but the
// check's input envelope. Each instance then keeps its last check input
// and verdict, and answers an identical input, byte for byte, without
// entering the guest: a session that repeats a call, or a plugin such as
// trifecta whose input (labels, capabilities, tool) stays the same across
// calls to the same tool, pays for building the envelope and one
// comparison instead of a guest call.
//
// The promise is the plugin's to keep: a plugin that counts its calls
// must not make it. It binds only the plugin (the input still carries
// everything it declared it needs, so a new label, tool or argument is a
// new input) and only check: list and observe always run, and a stateful
// plugin's check (guest_state.go) is never reused, since its input carries state
// the guest may change. Only a verdict the guest returned is kept: a fault
// is not, so the next identical input runs the guest again.

// parseDescribeDeterministic reads describe's optional "deterministic".
func parseDescribeDeterministic(out []byte) (bool, error) {
	var d struct {
		Deterministic json.RawMessage `json:"deterministic"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return false, fmt.Errorf("deterministic: %v", err)
	}
	switch string(d.Deterministic) {
	case "", "null", "false":
		return false, nil
	case "true":
		return true, nil
	}
	return false, fmt.Errorf("deterministic: want true or false, got %s", truncate(string(d.Deterministic), 40))
}

// lastCheck is an instance's last check input and the verdict the guest
// gave for it.
type lastCheck struct {
	ok      bool
	input   []byte
	verdict policy.PluginVerdict
}

// reuse returns the verdict for input when it is the last input seen.
func (l *lastCheck) reuse(input []byte) (policy.PluginVerdict, bool) {
	if l.ok && bytes.Equal(l.input, input) {
		return l.verdict, true
	}
	return policy.PluginVerdict{}, false
}

// keep records the guest's verdict for input; a fault forgets the last.
func (l *lastCheck) keep(input []byte, v policy.PluginVerdict, f *Fault) {
	if f != nil {
		l.ok = false
		return
	}
	l.input = append(l.input[:0], input...)
	l.verdict, l.ok = v, true
}

// Deterministic reports whether the plugin declared its check output a
// function of its input alone (section 15).
func (p *Plugin) Deterministic() bool { return p.deterministic }
