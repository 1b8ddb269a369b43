package host

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// testGeneration is a generation whose close is counted and observable.
type testGeneration struct {
	*generation
	seq    int64
	closed atomic.Bool
	closes atomic.Int32
}

func newTestGeneration(seq int64) *testGeneration {
	tg := &testGeneration{generation: newGeneration(nil, nil), seq: seq}
	tg.closers = append(tg.closers, func(context.Context) error {
		tg.closed.Store(true)
		tg.closes.Add(1)
		return nil
	})
	return tg
}

// Calls take the generation while reloads replace it as fast as they can:
// no call ever gets a generation that was replaced before it started, none
// sees its generation closed while using it, and every replaced
// generation closes exactly once, after its last call.
func TestAReplacedGenerationClosesOnceAfterItsLastCall(t *testing.T) {
	t.Parallel()
	const callers, reloads = 4, 300
	h := &Host{}
	gens := []*testGeneration{newTestGeneration(0)}
	bySeq := sync.Map{} // *generation -> *testGeneration
	bySeq.Store(gens[0].generation, gens[0])
	h.gen.Store(gens[0].generation)
	var published atomic.Int64 // seq of the generation last made current
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for !stop.Load() {
				floor := published.Load()
				u := h.acquire()
				v, _ := bySeq.Load(u.g)
				tg := v.(*testGeneration)
				if tg.seq < floor {
					t.Errorf("a call got generation %d, replaced by %d before it started", tg.seq, floor)
				}
				for range 8 { // a use, checked at both ends
					if tg.closed.Load() {
						t.Errorf("generation %d closed while a call used it", tg.seq)
						break
					}
				}
				u.release()
			}
		})
	}
	for i := int64(1); i <= reloads; i++ {
		next := newTestGeneration(i)
		bySeq.Store(next.generation, next)
		gens = append(gens, next)
		old := h.gen.Swap(next.generation)
		published.Store(i)
		old.retire()
	}
	stop.Store(true)
	wg.Wait()
	for _, tg := range gens[:len(gens)-1] {
		<-tg.done
		if n := tg.closes.Load(); n != 1 {
			t.Errorf("generation %d closed %d times", tg.seq, n)
		}
	}
	last := gens[len(gens)-1]
	if last.closed.Load() {
		t.Fatal("the current generation closed")
	}
	last.retire() // as Close does
	<-last.done
	if n := last.closes.Load(); n != 1 {
		t.Errorf("the last generation closed %d times", n)
	}
	// A call after Close gets the closed generation and does not close it again.
	h.acquire().release()
	if n := last.closes.Load(); n != 1 {
		t.Errorf("a call after close closed it again: %d closes", n)
	}
}

// A retired generation still in use closes when its last use ends, and
// not before.
func TestARetiredGenerationWaitsForEveryUse(t *testing.T) {
	t.Parallel()
	h := &Host{}
	tg := newTestGeneration(0)
	h.gen.Store(tg.generation)
	var uses []use
	for range 100 {
		uses = append(uses, h.acquire())
	}
	h.gen.Store(newGeneration(nil, nil))
	tg.retire()
	for i, u := range uses {
		if tg.closed.Load() {
			t.Fatalf("closed with %d uses left", len(uses)-i)
		}
		u.release()
	}
	if !tg.closed.Load() || tg.closes.Load() != 1 {
		t.Fatalf("closed %v, %d times, after its last use", tg.closed.Load(), tg.closes.Load())
	}
}

// Every use made on one core adds to one stripe: the core's own, which no
// other core writes (a stripe drawn at random per use was last written by
// the other core half the time). The race detector's sync.Pool drops
// objects at random, and a dropped home is drawn again, so this runs
// without it (scripts/test.sh runs it so).
func TestUsesOnOneCoreStayOnItsStripe(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops each P's stripe at random")
	}
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
	var c useCount
	for range 100 {
		c.stripe().n.Add(1)
	}
	var used []int
	for i := range c.stripes {
		if n := c.stripes[i].n.Load(); n != 0 {
			used = append(used, i)
			if n != 100 {
				t.Errorf("stripe %d holds %d of 100 uses", i, n)
			}
		}
	}
	if len(used) != 1 {
		t.Fatalf("100 uses on one core landed on stripes %v", used)
	}
}

// A use is taken back on the stripe it was added to, even when its core
// would pick another stripe by then (its goroutine moved, or the
// collector dropped the core's stripe): the count is looked up once per
// call, and no stripe is left off by one.
func TestAUseIsTakenBackWhereItWasAdded(t *testing.T) {
	t.Parallel()
	h := &Host{}
	g := newGeneration(nil, nil)
	h.gen.Store(g)
	u := h.acquire()
	// The core's stripe moves on (as after the collector dropped it, or
	// the goroutine moved to another core): the next lookup finds another.
	home := g.uses.homes.Get(useStripes)
	home.Store((home.Load() + 1) % useStripes)
	u.release()
	for i := range g.uses.stripes {
		if n := g.uses.stripes[i].n.Load(); n != 0 {
			t.Errorf("stripe %d holds %d after the use ended", i, n)
		}
	}
}
