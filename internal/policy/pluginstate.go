package policy

import (
	"sort"
	"strconv"
	"strings"

	"github.com/toolwarden/toolwarden/internal/session"
)

// StateStore gives plugins their per-session state: one slot per plugin
// (its [policies.<name>] key), which a plugin holds across reading the
// state, deciding and updating it (pdk/ABI.md section 12). A
// *session.Session is one.
type StateStore interface {
	Plugin(name string) *session.PluginSlot
}

var _ StateStore = (*session.Session)(nil)

// stateDetail renders a stateful plugin's state after its check for the
// trace's detail, so that explain's text shows it too: ` [state: calls=2,
// last_host="example.com"]`; "" when the check changed no state.
func stateDetail(st *session.PluginState) string {
	if st == nil {
		return ""
	}
	var parts []string
	for _, k := range sortedKeys(st.Counters) {
		parts = append(parts, k+"="+strconv.FormatInt(st.Counters[k], 10))
	}
	for _, k := range sortedKeys(st.Entries) {
		v := st.Entries[k]
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		parts = append(parts, k+"="+strconv.Quote(v))
	}
	return " [state: " + strings.Join(parts, ", ") + "]"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
