package sdk

import (
	"reflect"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/client"
)

// MCPClient is mcp-go's client interface, which a guarded client implements
// too: an agent swaps one value and keeps its code.
type MCPClient = client.MCPClient

// Session is one conversation. Its clients carry its ID into every
// decision, so that what one conversation approved, or the labels its calls
// earned, never apply to another. A client is bound to its session when it
// is made; there is no way to switch it to another one.
type Session struct {
	g     *Guard
	id    string
	ended atomic.Bool
}

// ID is the session's ID, as policy and the audit log know it.
func (s *Session) ID() string { return s.id }

// Client guards c, the agent's client of the [mcp_servers.<server>] named
// server, for this conversation. Clients of the same c in several sessions
// share one set of the server's tool definitions (a list read by one serves all)
// but nothing a session remembers.
func (s *Session) Client(server string, c MCPClient) MCPClient {
	if c == nil {
		panic("sdk: Client(" + server + ", nil): there is no client to guard")
	}
	return &guarded{s: s, up: s.g.upstream(server, c)}
}

// End forgets everything the conversation remembered (approvals, pins,
// labels). Its clients refuse every later call: a conversation that went on
// after End would start over without the labels it had earned.
func (s *Session) End() {
	if s.ended.Swap(true) {
		return
	}
	s.g.forget(s.id)
	s.g.mu.RLock()
	s.g.h.EndSession(s.id)
	s.g.mu.RUnlock()
}

// upstreamKey names one server connection: the same client under the same
// name shares one set of tool definitions.
type upstreamKey struct {
	server string
	client MCPClient
}

// upstream returns the connection (and its tool definitions) for c under name, creating it (and
// subscribing to c's notifications) on first use.
func (g *Guard) upstream(name string, c MCPClient) *upstream {
	if !reflect.TypeOf(c).Comparable() {
		// Cannot be a map key: definitions of its own.
		return newUpstream(name, c)
	}
	k := upstreamKey{name, c}
	g.smu.Lock()
	defer g.smu.Unlock()
	u := g.ups[k]
	if u == nil {
		u = newUpstream(name, c)
		g.ups[k] = u
	}
	return u
}
