package plugin

import (
	"sync"
	"sync/atomic"
	"time"
)

// Deadlines without a timer operation per event. Stopping and re-arming a
// Go timer around every guest call took the runtime's timer locks twice
// per event, a visible share of a cheap plugin's cost and a point of
// contention between cores. Instead each instance's timer stays scheduled
// across events: arming an event stores its deadline, and the timer is
// moved only when it is idle or due later than the new deadline. When it
// fires it looks at the running event's deadline: passed, it fires the stop
// flag; not yet (a later event), it sleeps until then; no event running,
// it lapses until the next arm.
//
// The guarantee is the same as with a timer per event: an event's stop flag
// is set no later than its deadline (plus the timer's own latency), never
// by another event's deadline, and the timer's function stays the flag's
// only writer. The handoff between the timer and the event ending is
// deadlineClock.due: the timer claims an event by swapping its deadline for
// dueFiring, the event ends by swapping in 0, and only one of them wins.

// dueFiring marks a deadline the timer has claimed: the flag is being set.
const dueFiring = -1

// clockBase makes deadlines small monotonic numbers (time.Since reads only
// the monotonic clock).
var clockBase = time.Now()

func nowNanos() int64 { return int64(time.Since(clockBase)) }

type deadlineClock struct {
	// due is the running event's deadline in nowNanos, 0 when no event
	// runs, dueFiring once the timer claimed it.
	due atomic.Int64
	// kill asks the timer to fire at once, event or not (interrupt).
	kill atomic.Bool

	// at is when the timer is scheduled for, in nowNanos; 0 when it is
	// not. Written under mu; read without it by arm, which needs no lock
	// when the timer already goes off no later than the new deadline.
	at atomic.Int64
	mu sync.Mutex
}

// fire runs on the timer's goroutine once it claimed a deadline: it stops
// the guest at its next check (stopGuest: the stop flag, or the context
// wazero watches with -tags toolwarden_wazero_interrupt). Its body runs at
// most once per instance: an instance whose deadline fired is discarded.
// See docs/RATIONALE.md ("Plugin deadlines are a stop flag, not wazero's
// context watch") for why plain writes from another goroutine are enough.
func (in *instance) fire() {
	if !in.fired.CompareAndSwap(false, true) {
		return
	}
	in.stopGuest()
	in.fireDone <- struct{}{} // buffered, and sent once
}

// tick is the timer's function.
func (in *instance) tick() {
	c := &in.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	// Lapse before reading the deadline: an arm that stores its deadline
	// after this read sees at == 0 and schedules the timer itself.
	c.at.Store(0)
	for {
		due := c.due.Load()
		if due == dueFiring {
			return
		}
		now := nowNanos()
		if c.kill.Load() || due != 0 && now >= due {
			if c.due.CompareAndSwap(due, dueFiring) {
				in.fire()
				return
			}
			continue // the event ended or another began: look again
		}
		if due != 0 { // an event with a later deadline runs
			c.schedule(in.timer, due, now)
		}
		return
	}
}

// schedule moves the timer to due (at least 1); c.mu is held.
func (c *deadlineClock) schedule(t *time.Timer, due, now int64) {
	c.at.Store(max(due, 1))
	t.Reset(time.Duration(due - now))
}

// arm starts the deadline of one guest call, d > 0 from now.
func (in *instance) arm(d time.Duration) {
	if !in.canStop() {
		return
	}
	c := &in.clock
	now := nowNanos()
	due := now + int64(d)
	// Store the deadline before reading at (see tick).
	if !c.due.CompareAndSwap(0, due) {
		return // an interrupt fired already: the flag is set
	}
	if at := c.at.Load(); at != 0 && at <= due {
		return // the timer goes off in time and will look at due
	}
	c.mu.Lock()
	if at := c.at.Load(); at == 0 || at > due {
		c.schedule(in.timer, due, now)
	}
	c.mu.Unlock()
}

// disarm ends the deadline after the call and reports whether it fired.
// When it did, disarm waits until the flag is set, so that nothing of the
// timer's firing outlives the call.
func (in *instance) disarm() (fired bool) {
	if !in.canStop() || in.clock.due.Swap(0) != dueFiring {
		return false
	}
	<-in.fireDone
	return true
}

// interrupt stops a running guest at its next check, by firing its
// deadline now (so the timer's function stays the flag's only writer); the
// instance cannot run again. It is safe on an idle instance, from any
// goroutine.
func (in *instance) interrupt() {
	if !in.canStop() {
		return
	}
	c := &in.clock
	c.kill.Store(true)
	c.mu.Lock()
	c.schedule(in.timer, 0, 0)
	c.mu.Unlock()
}
