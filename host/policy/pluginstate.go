package policy

import "github.com/toolwarden/toolwarden/host/session"

// StateStore gives plugins their per-session state: one slot per plugin
// (its [policies.<name>] key), which a plugin holds across reading the
// state, deciding and updating it (pdk/ABI.md section 12). A
// *session.Session is one.
type StateStore interface {
	Plugin(name string) *session.PluginSlot
}

var _ StateStore = (*session.Session)(nil)
