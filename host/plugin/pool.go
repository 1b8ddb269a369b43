package plugin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// pool holds a plugin's warm instances. At most max exist at once; a caller
// takes an idle one, or creates one while under max, or waits. A discarded
// instance frees its slot, and the next caller that needs one creates a
// fresh instance (outside any event deadline).
type pool struct {
	p     *Plugin
	idle  chan *instance
	slots chan struct{} // one token per live instance

	closed atomic.Bool

	mu   sync.Mutex
	live map[*instance]struct{} // every instance not yet discarded, idle or running
}

func newPool(p *Plugin, max int) *pool {
	return &pool{p: p, idle: make(chan *instance, max), slots: make(chan struct{}, max)}
}

func (pl *pool) get(ctx context.Context) (*instance, error) {
	select {
	case in := <-pl.idle:
		return in, nil
	default:
	}
	select {
	case in := <-pl.idle:
		return in, nil
	case pl.slots <- struct{}{}:
		if pl.isClosed() {
			<-pl.slots
			return nil, errClosed
		}
		in, err := pl.p.newInstance(context.WithoutCancel(ctx))
		if err != nil {
			<-pl.slots
			return nil, err
		}
		if pl.p.desc.Name != "" {
			// A plugin reads its config at its first event (pdk/ABI.md), and
			// a big config (hundreds of argguard patterns) can take longer
			// than an event's deadline. The plugin's first instance did that
			// in Load's describe; every later one does it here, under the
			// init deadline, not in the event that happens to need it.
			if _, code, f := in.describe(ctx); f != nil || code != CodeOK {
				in.close()
				<-pl.slots
				if f != nil {
					return nil, f
				}
				return nil, errors.New("describe: " + codeMessage(code, nil))
			}
		}
		pl.mu.Lock()
		if pl.live == nil {
			pl.live = map[*instance]struct{}{}
		}
		pl.live[in] = struct{}{}
		pl.mu.Unlock()
		return in, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// put returns a healthy instance, or discards one that must retire.
func (pl *pool) put(in *instance) {
	if in.retire || pl.isClosed() {
		pl.discard(in)
		return
	}
	pl.idle <- in
	// Close may have drained idle between the check and the send.
	if pl.isClosed() {
		pl.drain()
	}
}

func (pl *pool) discard(in *instance) {
	pl.mu.Lock()
	delete(pl.live, in)
	pl.mu.Unlock()
	in.close()
	<-pl.slots
}

func (pl *pool) isClosed() bool { return pl.closed.Load() }

// close discards the idle instances and stops the running ones at their
// next check (they fail as closed and are discarded when they return).
func (pl *pool) close() {
	pl.closed.Store(true)
	pl.mu.Lock()
	for in := range pl.live {
		in.interrupt()
	}
	pl.mu.Unlock()
	pl.drain()
}

func (pl *pool) drain() {
	for {
		select {
		case in := <-pl.idle:
			pl.discard(in)
		default:
			return
		}
	}
}
