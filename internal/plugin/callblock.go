package plugin

import "github.com/toolwarden/toolwarden/internal/hints"

// The call's capabilities, hints, server, app, connector and tool block
// depend on the tool's definition and the policy, not on the call: a
// session calling one tool a thousand times would render them a thousand
// times. Each instance keeps the last few renderings, keyed by every value
// that goes into them (not by a pointer or a name), so a definition that
// changed (new hash, title or hints after a config reload or a drift) can
// never reuse stale bytes: its key differs.

// defKey is everything appendDefinition reads.
type defKey struct {
	server, app, connector string
	name, title, hash      string
	hints                  hints.Set
	caps                   hints.Capabilities
}

// defEntries is how many definitions an instance remembers: enough for an
// agent alternating between a few tools, small enough to scan linearly.
const defEntries = 4

type defMemo struct {
	keys  [defEntries]defKey
	bytes [defEntries][]byte
	used  int // entries filled
	next  int // the entry to replace next
}

// callDefinition appends the rendered definition parts, from the memo when
// the same definition was rendered before on this instance.
func (in *instance) callDefinition(b []byte, server, app, connector string, tool *hints.Tool, h *hints.Set, caps hints.Capabilities) []byte {
	k := defKey{server: server, app: app, connector: connector, hints: *h, caps: caps}
	if tool != nil {
		k.name, k.title, k.hash = tool.Name, tool.Title, tool.HashHex
	}
	m := &in.defs
	for i := range m.used {
		if m.keys[i] == k {
			return append(b, m.bytes[i]...)
		}
	}
	at := len(b)
	b = appendDefinition(b, in.p.needs(), server, app, connector, tool, h, caps)
	i := m.next
	m.next = (m.next + 1) % defEntries
	m.used = max(m.used, i+1)
	m.keys[i] = k
	m.bytes[i] = append(m.bytes[i][:0], b[at:]...)
	return b
}
