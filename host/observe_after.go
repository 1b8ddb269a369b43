package host

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"sync/atomic"
)

// Observing after the answer. A proxy must run Observe before the client
// acts on a result, so that labels an observer adds apply to the client's
// next call; it need not run it before the client reads the result. A
// plugin's observe is a guest call on the latency path of every tools/call
// (a cold one: the proxy waits on the server between calls), so
// ObserveAfter runs it beside the answer instead, and every later entry
// point that reads the session's labels (Check, Observe, the tool list,
// Session) first waits for the session's pending observations. What a
// client sees next is the same as with Observe; it only sees the result
// sooner.

// observeGates holds, per session, the observations still running.
type observeGates struct {
	pending atomic.Int64 // observations running in any session: 0 skips the map
	gates   sync.Map     // session id -> *observeGate
}

// observeGate counts one session's running observations.
type observeGate struct {
	mu      sync.Mutex
	n       int
	done    chan struct{} // closed when n drops to 0
	waiters atomic.Int32  // callers in wait (for tests)
}

func (g *observeGate) begin() {
	g.mu.Lock()
	if g.n == 0 {
		g.done = make(chan struct{})
	}
	g.n++
	g.mu.Unlock()
}

func (g *observeGate) end() {
	g.mu.Lock()
	g.n--
	if g.n == 0 {
		close(g.done)
	}
	g.mu.Unlock()
}

// wait returns once the observations that began before it have ended.
func (g *observeGate) wait() {
	g.mu.Lock()
	if g.n == 0 {
		g.mu.Unlock()
		return
	}
	done := g.done
	g.mu.Unlock()
	g.waiters.Add(1)
	<-done
	g.waiters.Add(-1)
}

// settle waits for the pending observations of session id. It costs one
// atomic load when none runs anywhere.
func (o *observeGates) settle(id string) {
	if o.pending.Load() == 0 {
		return
	}
	if g, ok := o.gates.Load(id); ok {
		g.(*observeGate).wait()
	}
}

func (o *observeGates) gate(id string) *observeGate {
	if g, ok := o.gates.Load(id); ok {
		return g.(*observeGate)
	}
	g, _ := o.gates.LoadOrStore(id, &observeGate{})
	return g.(*observeGate)
}

// ObserveAfter is Observe run beside the caller: it returns at once and
// observes in the background, and the session's next Check, Observe, tool
// list or Session waits until it is done. A proxy calls it just before it
// answers the client. It copies what it keeps of c, d and r, so the caller
// may reuse their memory; the observation is not canceled with ctx (a
// result that arrived must be observed, or its labels would be lost).
// When Observe would do nothing for this call it does nothing. A Go-native
// observer must not call back into the host for the same session (Check,
// Observe, Session): that call would wait for the observation it runs in.
//
// With a shared store it observes before it returns, as Observe does: the
// labels it adds must be saved before the client, told the result, makes
// its next call, which another replica may decide (store.go).
func (h *Host) ObserveAfter(ctx context.Context, c Call, d *Decision, r Result) {
	if !h.ObservesCall(d) {
		return
	}
	if h.shared.st != nil {
		h.Observe(context.WithoutCancel(ctx), c, d, r)
		return
	}
	c.Session = strings.Clone(c.Session)
	c.Arguments = bytes.Clone(c.Arguments)
	r.Text = strings.Clone(r.Text)
	dc := *d
	gate := h.observing.gate(c.Session)
	gate.begin()
	h.observing.pending.Add(1)
	u := h.acquire() // Close waits for the observation
	ctx = context.WithoutCancel(ctx)
	go func() {
		defer func() {
			u.release()
			h.observing.pending.Add(-1)
			gate.end()
			// A Go-native observer that panics must not take the process
			// down from a goroutine nobody waits on: the caller of Observe
			// would have seen the panic, here it is logged and dropped.
			if v := recover(); v != nil && h.settings.logger != nil {
				h.settings.logger.Error("observer panicked", "session", c.Session, "tool", c.Tool.Name, "panic", v)
			}
		}()
		h.observe(ctx, u.g, c, &dc, r)
	}()
}
