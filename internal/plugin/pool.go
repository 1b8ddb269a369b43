package plugin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
)

// pool holds a plugin's warm instances. At most max exist at once; a caller
// takes an idle one, or creates one while under max, or waits for one to
// come back or be discarded. A discarded instance frees its place, and the
// next caller that needs one creates a fresh instance (outside any event
// deadline).
type pool struct {
	p *Plugin
	// idle holds the instances waiting for an event; it has room for max,
	// so a put never blocks.
	idle chan *instance
	// places holds a token for every instance that lives or is being
	// created: a caller that can send one may create an instance.
	places chan struct{}

	mu   sync.Mutex
	live map[*instance]struct{} // every instance not yet discarded, idle or running

	// waiting counts the callers blocked in get (tests wait for one).
	waiting atomic.Int32
	closed  atomic.Bool
}

func newPool(p *Plugin, max int) *pool {
	return &pool{p: p, idle: make(chan *instance, max), places: make(chan struct{}, max)}
}

// get returns an idle instance, or a new one while fewer than max live,
// or waits for either until ctx ends. An idle instance is taken before a
// new one is made: creating one costs milliseconds.
func (pl *pool) get(ctx context.Context) (*instance, error) {
	select {
	case in := <-pl.idle:
		return in, nil
	default:
	}
	pl.waiting.Add(1)
	defer pl.waiting.Add(-1)
	select {
	case in := <-pl.idle:
		return in, nil
	case pl.places <- struct{}{}:
		return pl.create(ctx)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// create makes an instance in the place get reserved.
func (pl *pool) create(ctx context.Context) (*instance, error) {
	fail := func(err error) (*instance, error) {
		<-pl.places
		return nil, err
	}
	if pl.isClosed() {
		return fail(errClosed)
	}
	in, err := pl.p.newInstance(context.WithoutCancel(ctx))
	if err != nil {
		return fail(err)
	}
	if pl.p.desc.Name != "" {
		// A plugin reads its config at its first event (pdk/ABI.md), and
		// a big config (hundreds of argguard patterns) can take longer
		// than an event's deadline. The plugin's first instance did that
		// in Load's describe; every later one does it here, under the
		// init deadline, not in the event that happens to need it.
		if _, code, f := in.describe(ctx); f != nil || code != CodeOK {
			in.close()
			if f != nil {
				return fail(f)
			}
			return fail(errors.New("describe: " + codeMessage(code, nil)))
		}
		if pl.p.wantsInit() {
			if err := in.initInstance(ctx); err != nil {
				in.close()
				return fail(err)
			}
		}
	}
	pl.mu.Lock()
	if pl.live == nil {
		pl.live = map[*instance]struct{}{}
	}
	pl.live[in] = struct{}{}
	pl.mu.Unlock()
	return in, nil
}

// put returns a healthy instance to the idle ones, or discards one that
// must retire.
func (pl *pool) put(in *instance) {
	if in.retire || pl.isClosed() {
		pl.discard(in)
		return
	}
	pl.idle <- in
	// Close may have drained the idle instances between the check and the
	// put.
	if pl.isClosed() {
		pl.drain()
	}
}

func (pl *pool) discard(in *instance) {
	pl.mu.Lock()
	delete(pl.live, in)
	pl.mu.Unlock()
	in.close()
	<-pl.places
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

// take and give are for tests: hold an idle instance (creating one if
// none is idle) and return it.
func (pl *pool) take() *instance {
	in, err := pl.get(context.Background())
	if err != nil {
		panic(err)
	}
	return in
}

func (pl *pool) give(in *instance) { pl.put(in) }
