package host

import (
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// stateChange is one plugin's change of its session state, as the audit
// log records it for observe (a check's is in its trace).
type stateChange struct {
	Plugin string               `json:"plugin"`
	Update *session.StateUpdate `json:"update"`
	State  *session.PluginState `json:"state"`
}

func observedState(list []stateChange, plugin string, res *policy.ObserveResult) []stateChange {
	if res.StateUpdate == nil {
		return list
	}
	return append(list, stateChange{Plugin: plugin, Update: res.StateUpdate, State: res.State})
}
