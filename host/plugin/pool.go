package plugin

import (
	"context"
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
	in.close()
	<-pl.slots
}

func (pl *pool) isClosed() bool { return pl.closed.Load() }

func (pl *pool) close() {
	pl.closed.Store(true)
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
