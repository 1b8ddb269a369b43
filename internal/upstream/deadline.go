package upstream

import (
	"context"
	"sync"
	"time"
)

// deadlines enforces tool timeouts without a timer per call. A timer per
// call (context.WithTimeout) costs a netpoller wake-up each time it is set
// and stopped, a visible share of the proxy's CPU per round trip
// (docs/performance.md, "Proxy round trip"); tool
// timeouts are seconds to minutes, so one watcher checking every tick is
// precise enough. The watcher runs only while calls are in flight (and a
// little after, so a steady stream of calls does not restart it each time).
type deadlines struct {
	tick time.Duration

	mu      sync.Mutex
	calls   map[*deadline]struct{}
	running bool
}

// deadline is one watched call: its expire runs (once, on a goroutine of
// its own) if the call is still watched at its time.
type deadline struct {
	at time.Time
	e  expirer
}

type expirer interface{ expire() }

// expireFunc is a func as an expirer.
type expireFunc func()

func (f expireFunc) expire() { f() }

// errDeadline is the cause given to a call's context when it times out.
var errDeadline = context.DeadlineExceeded

// add watches a call that must end by dl.at; stop it with remove.
func (w *deadlines) add(dl *deadline) {
	w.mu.Lock()
	if w.calls == nil {
		w.calls = map[*deadline]struct{}{}
	}
	w.calls[dl] = struct{}{}
	if !w.running {
		w.running = true
		go w.run()
	}
	w.mu.Unlock()
}

// remove stops watching a call. It reports whether the call was still
// watched (false: its time came, and expire runs or ran).
func (w *deadlines) remove(dl *deadline) bool {
	w.mu.Lock()
	_, ok := w.calls[dl]
	delete(w.calls, dl)
	w.mu.Unlock()
	return ok
}

// watch returns ctx bounded by d; release must be called when the call ends.
func (w *deadlines) watch(ctx context.Context, d time.Duration) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	dl := &deadline{at: time.Now().Add(d), e: expireFunc(func() { cancel(errDeadline) })}
	w.add(dl)
	return ctx, func() {
		w.remove(dl)
		cancel(context.Canceled)
	}
}

func (w *deadlines) run() {
	t := time.NewTicker(w.tick)
	defer t.Stop()
	idleSince := time.Time{}
	var due []*deadline
	for now := range t.C {
		w.mu.Lock()
		if len(w.calls) == 0 {
			if idleSince.IsZero() {
				idleSince = now
			} else if now.Sub(idleSince) > idleStop {
				w.running = false
				w.mu.Unlock()
				return
			}
		} else {
			idleSince = time.Time{}
		}
		for dl := range w.calls {
			if !now.Before(dl.at) {
				due = append(due, dl)
				delete(w.calls, dl)
			}
		}
		w.mu.Unlock()
		// Each on its own goroutine: expiring a call finishes it, which
		// answers the client, and a slow client must not hold up the
		// other deadlines.
		for i, dl := range due {
			go dl.e.expire()
			due[i] = nil
		}
		due = due[:0]
	}
}
