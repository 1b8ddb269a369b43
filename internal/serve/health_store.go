package serve

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Readiness includes the shared store: a replica whose store does not
// answer denies every call (nothing is allowed on state that may be
// stale), so a load balancer should send its traffic elsewhere until the
// store is back. Liveness does not look at the store: a database outage
// must not make a supervisor restart every replica, which would fix
// nothing and lose the sessions they hold.

const (
	// storeProbeTimeout bounds one look at the store: a probe must answer
	// well within a load balancer's own timeout (often 1 s to 5 s).
	storeProbeTimeout = 500 * time.Millisecond
	// storeProbeEvery is how long one look's answer is kept, so probes
	// from many balancers cost the database one query a second at most.
	storeProbeEvery = time.Second
)

// pinger is the part of *store.Store the probe uses.
type pinger interface {
	Ping(ctx context.Context) error
	URL() string // redacted
}

// storeProbe says whether the store answered its last look, looking again
// once the last answer is older than storeProbeEvery. Concurrent probes
// wait for the one look in flight rather than each querying.
type storeProbe struct {
	st  pinger
	log *slog.Logger
	now func() time.Time

	mu     sync.Mutex
	at     time.Time // when the last look ended; zero before the first
	downed bool      // the last look failed
}

func newStoreProbe(st pinger, log *slog.Logger) *storeProbe {
	return &storeProbe{st: st, log: log, now: time.Now}
}

// down reports whether the store is unreachable. A nil probe (serve with
// no store) is never down.
func (p *storeProbe) down() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.at.IsZero() && p.now().Sub(p.at) < storeProbeEvery {
		return p.downed
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeProbeTimeout)
	err := p.st.Ping(ctx)
	cancel()
	p.noteChange(err)
	p.at, p.downed = p.now(), err != nil
	return p.downed
}

// noteChange logs the moments readiness changes because of the store,
// with the cause (the probe's body, unauthenticated, gives none).
func (p *storeProbe) noteChange(err error) {
	switch {
	case err != nil && !p.downed:
		p.log.Error("readiness: the shared store is unreachable; /readyz answers 503 until it answers", "store", p.st.URL(), "err", err)
	case err == nil && p.downed:
		p.log.Info("readiness: the shared store answers again; /readyz answers 200", "store", p.st.URL())
	}
}

// storeDown is the readiness probe's look at Options.Store; nil when
// serve has no store.
func (s *Server) storeDown() func() bool {
	if s.opts.Store == nil {
		return nil
	}
	return newStoreProbe(s.opts.Store, s.log).down
}
