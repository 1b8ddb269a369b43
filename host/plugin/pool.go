package plugin

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/toolwarden/toolwarden/host/internal/corehome"
)

// pool holds a plugin's warm instances. At most max exist at once; a caller
// takes an idle one, or creates one while under max, or waits. A discarded
// instance frees its slot, and the next caller that needs one creates a
// fresh instance (outside any event deadline).
//
// Idle instances wait in slots, each on cache lines of its own, and each
// core has a home slot: a caller looks there first, and an instance goes
// back to the home slot of the core that took it. A core thus takes back
// the instance it used last, with its memory, its buffers and its
// deterministic last check still in that core's cache, and taking and
// returning it writes only that slot's line: nothing two cores deciding at
// once both write. Only when its home slot is empty does a caller look at
// the others, and only creating, discarding and waiting take the pool's
// lock. (A stack under one lock, the earlier design, took the lock twice
// per event and handed the instance a core had just used to whichever
// core came next.)
//
// Each P's home slot number comes from homes (host/internal/corehome); a
// P whose home was drawn again and landed on another P's moves off it at
// once (see takeIdle).
type pool struct {
	p     *Plugin
	max   int
	slots []poolSlot
	homes corehome.Homes

	mu   sync.Mutex
	live map[*instance]struct{} // every instance not yet discarded, idle or running
	// nlive is len(live) plus instances being created.
	nlive int
	// freed wakes callers waiting for an instance: one token per put or
	// discard while someone waits (a waiter looks at the slots again).
	freed   chan struct{}
	waiting atomic.Int32

	closed atomic.Bool
}

// poolSlot holds one idle instance, alone on two cache lines (a core's
// prefetcher fetches lines in pairs).
type poolSlot struct {
	in atomic.Pointer[instance]
	_  [128 - 8]byte
}

func newPool(p *Plugin, max int) *pool {
	return &pool{p: p, max: max, slots: make([]poolSlot, slotsPerInstance*max), freed: make(chan struct{}, max)}
}

// slotsPerInstance: a slot for each core's home and as many again, so
// that an instance coming back to a taken home finds an empty slot at
// once.
const slotsPerInstance = 2

// get returns an idle instance, looking in the calling core's home slot
// first, or a new one.
func (pl *pool) get(ctx context.Context) (*instance, error) {
	home := pl.homes.Get(pl.max)
	for {
		if in := pl.takeIdle(home); in != nil {
			return in, nil
		}
		pl.mu.Lock()
		if pl.nlive < pl.max {
			pl.nlive++
			pl.mu.Unlock()
			in, err := pl.create(ctx)
			if in != nil {
				in.home = home.Load()
			}
			return in, err
		}
		// Announce the wait (under the lock, so that a discard either
		// freed its place before the count above or sees the waiter),
		// then look once more: a put either sees the waiter and
		// signals, or put its instance where this look finds it.
		pl.waiting.Add(1)
		pl.mu.Unlock()
		if in := pl.takeIdle(home); in != nil {
			pl.waiting.Add(-1)
			return in, nil
		}
		select {
		case <-pl.freed:
			pl.waiting.Add(-1)
		case <-ctx.Done():
			pl.waiting.Add(-1)
			return nil, ctx.Err()
		}
	}
}

// takeIdle takes an idle instance from the P's home slot, or else from
// any other slot, which then becomes the P's home: the instance goes back
// there, and the P looks there first next time.
//
// Moving the home is what keeps two Ps apart. A P draws its home when it
// has none (its first call, or after the collector dropped it), and a
// draw may land on another P's home; without the move, the two would take
// each other's instances from then on, each arriving with its memory in
// the other core's cache (4 % of takes did, on two cores deciding back to
// back). With it, the P whose home was empty settles on the slot where
// the other instance waits, and each P has its own again.
func (pl *pool) takeIdle(h *corehome.Home) *instance {
	home := h.Load()
	if in := pl.slots[home].in.Swap(nil); in != nil {
		in.home = home
		return in
	}
	for i := range len(pl.slots) - 1 {
		at := (home + 1 + i) % len(pl.slots)
		s := &pl.slots[at]
		if s.in.Load() == nil {
			continue
		}
		if in := s.in.Swap(nil); in != nil {
			h.Store(at)
			in.home = at
			return in
		}
	}
	return nil
}

// create makes an instance in a slot get reserved.
func (pl *pool) create(ctx context.Context) (*instance, error) {
	fail := func(err error) (*instance, error) {
		pl.mu.Lock()
		pl.nlive--
		pl.mu.Unlock()
		pl.wake()
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

// put returns a healthy instance to its slot, or discards one that must
// retire.
func (pl *pool) put(in *instance) {
	if in.retire || pl.isClosed() {
		pl.discard(in)
		return
	}
	if !pl.slots[in.home].in.CompareAndSwap(nil, in) && !pl.putAnywhere(in) {
		pl.discard(in)
		return
	}
	if pl.waiting.Load() > 0 {
		pl.signal()
	}
	// Close may have drained the slots between the check and the put.
	if pl.isClosed() {
		pl.drain()
	}
}

// putAnywhere puts in into any empty slot: another instance went home to
// its own. There is one, since there are more slots than instances may
// live and in is in none; should puts race past it twice, in is
// discarded rather than waited for.
func (pl *pool) putAnywhere(in *instance) bool {
	for i := range 2 * len(pl.slots) {
		if pl.slots[i%len(pl.slots)].in.CompareAndSwap(nil, in) {
			return true
		}
	}
	return false
}

// wake lets one waiting caller look again.
func (pl *pool) wake() {
	if pl.waiting.Load() > 0 {
		pl.signal()
	}
}

// signal hands a waiting caller a token (see freed).
func (pl *pool) signal() {
	select {
	case pl.freed <- struct{}{}:
	default:
	}
}

func (pl *pool) discard(in *instance) {
	pl.mu.Lock()
	delete(pl.live, in)
	pl.nlive--
	pl.mu.Unlock()
	in.close()
	pl.wake()
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
	for i := range pl.slots {
		if in := pl.slots[i].in.Swap(nil); in != nil {
			pl.discard(in)
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
