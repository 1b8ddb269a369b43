package upstream

import (
	"context"
	"sync"
	"time"
)

// deadlines enforces tool timeouts without a timer per call. A timer per
// call (context.WithTimeout) costs a netpoller wake-up each time it is set
// and stopped, which measured as 10% of the proxy's CPU per round trip; tool
// timeouts are seconds to minutes, so one watcher checking every tick is
// precise enough. The watcher runs only while calls are in flight (and a
// little after, so a steady stream of calls does not restart it each time).
type deadlines struct {
	tick time.Duration

	mu      sync.Mutex
	calls   map[*pendingCall]struct{}
	running bool
}

type pendingCall struct {
	at     time.Time
	cancel context.CancelCauseFunc
}

// errDeadline is the cause given to a call's context when it times out.
var errDeadline = context.DeadlineExceeded

// watch returns ctx bounded by d; release must be called when the call ends.
func (w *deadlines) watch(ctx context.Context, d time.Duration) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	pc := &pendingCall{at: time.Now().Add(d), cancel: cancel}
	w.mu.Lock()
	if w.calls == nil {
		w.calls = map[*pendingCall]struct{}{}
	}
	w.calls[pc] = struct{}{}
	if !w.running {
		w.running = true
		go w.run()
	}
	w.mu.Unlock()
	return ctx, func() {
		w.mu.Lock()
		delete(w.calls, pc)
		w.mu.Unlock()
		cancel(context.Canceled)
	}
}

// idleStop is how long the watcher lingers with nothing to watch.
const idleStop = 10 * time.Second

func (w *deadlines) run() {
	t := time.NewTicker(w.tick)
	defer t.Stop()
	idleSince := time.Time{}
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
		for pc := range w.calls {
			if !now.Before(pc.at) {
				pc.cancel(errDeadline)
				delete(w.calls, pc)
			}
		}
		w.mu.Unlock()
	}
}
