package sdk

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

// Guard puts one host in front of an agent's MCP clients. Create one with
// New, hand out a client per server and conversation (Session.Client, or
// Guard.Client for an agent with a single conversation), and Reload when
// the configuration changes. It is safe for concurrent use.
type Guard struct {
	// swapMu serialises Reload and Swap, so that a reload never lands on a
	// host Swap is replacing. Calls do not take it.
	swapMu sync.Mutex

	// mu is held for reading around every use of h, and for writing while
	// Swap moves the sessions to a new host: no decision, approval or
	// observation can land on the old host after its sessions were copied.
	mu sync.RWMutex
	h  *host.Host

	approver Approver
	// approvalTimeout bounds a wait on the approval inbox (channels.go).
	approvalTimeout time.Duration
	// contexts are what is known of each server's paths (WithServerContext).
	contexts map[string]*host.ServerContext
	// fallback is the session of Guard.Client.
	fallback string

	smu      sync.Mutex
	sessions map[string]*Session
	ups      map[upstreamKey]*upstream
}

// Option configures a Guard.
type Option func(*Guard)

// WithApprover sets who answers asks. Without one, every ask is denied with
// a tool error that says approval was needed.
func WithApprover(a Approver) Option { return func(g *Guard) { g.approver = a } }

// WithServerContext tells policy what is known of a server's paths (its
// working directory, home, the roots it was told of, the folders on its
// command line), so that path rules judge the file a relative path or "~"
// names to that server. Without it, such paths are unknown and path rules
// fail closed on them.
func WithServerContext(server string, sc *host.ServerContext) Option {
	return func(g *Guard) { g.contexts[server] = sc }
}

// New returns a guard deciding with h.
func New(h *host.Host, opts ...Option) *Guard {
	var b [8]byte
	_, _ = rand.Read(b[:])
	g := &Guard{
		h:        h,
		fallback: "sdk-" + hex.EncodeToString(b[:]),
		sessions: map[string]*Session{},
		ups:      map[upstreamKey]*upstream{},
		contexts: map[string]*host.ServerContext{},
	}
	for _, o := range opts {
		o(g)
	}
	return g
}

// Host is the host deciding now.
func (g *Guard) Host() *host.Host {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return g.h
}

// Reload applies a changed config (and the plugins it names) to the host
// deciding now, at run time (host.Host.Reload): the new rules and plugins
// are loaded first, and only if all of them load do they decide the next
// call. Sessions keep their approvals, pins, labels and counters; nothing
// is copied. An invalid cfg, or a plugin that does not load, changes
// nothing and Reload says why. Tool lists are not re-read: list again to
// see what the new config shows (a call to a tool it hides is denied
// whatever was listed before).
func (g *Guard) Reload(ctx context.Context, cfg *config.Config) error {
	g.swapMu.Lock()
	defer g.swapMu.Unlock()
	return g.Host().Reload(ctx, cfg)
}

// Swap replaces the host with another one and returns the old one, which
// no call uses any more once Swap returns: the caller may Close it. It is
// for a host built with other Settings (another approvals file or audit
// log); for a changed config or plugins, Reload is simpler and copies
// nothing. Every session this guard handed out keeps its approvals, pins,
// labels and counters: they are copied into the new host while no call
// can touch either. Tool lists are not re-read; calls made after Swap are
// decided by the new host whatever the agent listed before (list again to
// see what the new host shows).
func (g *Guard) Swap(h *host.Host) (old *host.Host) {
	g.swapMu.Lock()
	defer g.swapMu.Unlock()
	g.smu.Lock()
	ids := make([]string, 0, len(g.sessions))
	for id := range g.sessions {
		ids = append(ids, id)
	}
	g.smu.Unlock()

	g.mu.Lock()
	defer g.mu.Unlock()
	old = g.h
	if old == h {
		return old
	}
	for _, id := range ids {
		h.Session(id).Restore(old.Session(id).Snapshot())
	}
	g.h = h
	return old
}

// Client guards c, the agent's client of the [mcp_servers.<server>] named
// server, for the guard's one default conversation. An agent that runs
// several conversations at once uses Session(id).Client instead, so that
// their approvals and labels stay apart.
func (g *Guard) Client(server string, c MCPClient) MCPClient {
	return g.Session(g.fallback).Client(server, c)
}

// Session returns the conversation with id (the same value for the same
// id), creating it on first use. Its clients decide every call in that
// conversation, and only in it.
func (g *Guard) Session(id string) *Session {
	g.smu.Lock()
	defer g.smu.Unlock()
	s := g.sessions[id]
	if s == nil {
		s = &Session{g: g, id: id}
		g.sessions[id] = s
	}
	return s
}

// forget drops a session from the guard once it ended.
func (g *Guard) forget(id string) {
	g.smu.Lock()
	delete(g.sessions, id)
	g.smu.Unlock()
}

// use runs f with the current host, which Swap cannot replace meanwhile.
// f must not wait for anything but the host (no approver, no server).
func (g *Guard) use(f func(h *host.Host)) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	f(g.h)
}
