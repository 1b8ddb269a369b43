package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
)

// How a replica's view of the grants stays current. Each Store keeps an
// in-memory snapshot of the live grants, which Covers answers from. Three
// paths refresh it:
//
//   - a wake-up: a commit in this process, a Postgres NOTIFY from any
//     replica, or the listener reconnecting (notifications sent while it
//     was away are lost, so a reconnect wakes everyone);
//   - a poll every Options.Poll, which needs nothing but the database;
//   - and the guarantee: Covers first reads the revision, and when it is
//     not the snapshot's, refreshes before it answers.
//
// The first two keep the snapshot fresh so that Covers rarely waits; only
// the third is relied on. A NOTIFY lost, a poll not yet due: the next
// decision that would use a grant still sees every grant and revoke
// committed before it began. When the revision cannot be read, Covers
// fails closed (session.ErrNotCurrent).
//
// A refresh reads only the rows whose rev is above the snapshot's: rows
// are written with the revision their transaction took, and that
// transaction's lock on tw_revision's one row makes revisions commit in
// order, so every row at or below a revision read is already visible.

// Options.Staleness bounds how long Covers takes to confirm it is
// current: a quarter of it for the confirming read (a caller may queue
// behind one read in flight), all of it for the read and a refresh it
// waits for. Past that the database counts as unreachable: a short wait
// asks a person again, a long one holds every decision that would use a
// grant.
const (
	// readShare is the part of Staleness one confirming read may take.
	readShare = 4
	// refreshTimeout bounds one refresh, a full load included; a refresh
	// a Covers gave up on still finishes for the next one.
	refreshTimeout = 10 * time.Second
	// fullReloadEvery: the watcher reloads every live grant this often, so
	// that a database swapped under a running replica (restored from a
	// backup to an older revision, then written past it) cannot leave a
	// difference that reading by revision would never see.
	fullReloadEvery = 5 * time.Minute
)

// grantWatch is a Store's snapshot of live grants and what keeps it
// current. Readers load the snapshot without locks; refreshes build a new
// one and swap it in, one at a time (concurrent needs share one flight).
type grantWatch struct {
	s     *Store
	start sync.Once
	cur   atomic.Pointer[grantSnapshot]

	mu     sync.Mutex
	flight *refreshFlight

	// rmu guards the confirming reads: one runs at a time (reading), and
	// rnext is the one callers arriving now wait for.
	rmu     sync.Mutex
	reading bool
	rnext   *revisionRead
	// full asks the next flight to reload everything.
	full atomic.Bool

	// rowsRead counts the grant rows refreshes read: a test checks that a
	// change among many grants is read as one row, not all of them.
	rowsRead atomic.Int64
	// failing is set while refreshes fail, so that the log says so once.
	failing atomic.Bool
	// pollOnly makes the watcher ignore wake-ups: the propagation
	// benchmark measures the poll alone with it. Set before first use.
	pollOnly bool
}

// revisionRead is one confirming read that callers share.
type revisionRead struct {
	done chan struct{}
	rev  int64
	err  error
}

// refreshFlight is one refresh that callers needing one share.
type refreshFlight struct {
	done chan struct{}
	snap *grantSnapshot
	err  error
}

// grantSnapshot is the live grants at one revision. It is never modified
// once published.
type grantSnapshot struct {
	// rev is the revision it reflects: every grant written at or below it
	// is in it. -1 before the first load.
	rev   int64
	keys  map[session.ApprovalKey][]liveGrant
	count int
	// replaced is closed when a newer snapshot takes this one's place.
	replaced chan struct{}
}

// liveGrant is what matching a call needs of a grant.
type liveGrant struct {
	id    string
	scope session.GrantScope
	args  string // ArgsDigest; "" covers any arguments
}

func newSnapshot(rev int64, keys map[session.ApprovalKey][]liveGrant, count int) *grantSnapshot {
	return &grantSnapshot{rev: rev, keys: keys, count: count, replaced: make(chan struct{})}
}

// covers reports whether a grant in the snapshot covers a call of k by w
// with arguments digest args.
func (sn *grantSnapshot) covers(w session.Who, k session.ApprovalKey, args string) bool {
	for _, g := range sn.keys[k] {
		if (g.args == "" || g.args == args) && g.scope.Covers(w) {
			return true
		}
	}
	return false
}

// holds reports whether grant id of key k is live in the snapshot.
func (sn *grantSnapshot) holds(k session.ApprovalKey, id string) bool {
	return slices.ContainsFunc(sn.keys[k], func(g liveGrant) bool { return g.id == id })
}

// grantWatch returns the store's watch, starting its watcher on first use.
func (s *Store) grantWatch() *grantWatch {
	gw := &s.grants
	gw.start.Do(func() {
		gw.s = s
		gw.cur.Store(newSnapshot(-1, map[session.ApprovalKey][]liveGrant{}, 0))
		go s.watchGrants()
	})
	return gw
}

// current returns a snapshot at least as new as the revision the
// database holds now, refreshing first when needed, or an error wrapping
// session.ErrNotCurrent.
func (gw *grantWatch) current(ctx context.Context) (*grantSnapshot, error) {
	s := gw.s
	rev, err := gw.confirm(ctx)
	if err != nil {
		return nil, s.notCurrent("its revision could not be read", err)
	}
	if sn := gw.cur.Load(); sn.rev == rev {
		return sn, nil
	}
	return gw.refreshTo(ctx, rev)
}

// confirm reads the store's revision for a caller: it joins the next read
// that has not begun yet, so that the read begins after the caller came
// (and sees every commit that preceded it), while a crowd of callers
// costs one or two reads, not one each (which would also queue them for
// connections and fail them closed under load).
func (gw *grantWatch) confirm(ctx context.Context) (int64, error) {
	gw.rmu.Lock()
	r := gw.rnext
	if r == nil {
		r = &revisionRead{done: make(chan struct{})}
		gw.rnext = r
		if !gw.reading {
			gw.startRead()
		}
	}
	gw.rmu.Unlock()
	select {
	case <-r.done:
		return r.rev, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// startRead starts the read callers are waiting for; gw.rmu is held.
func (gw *grantWatch) startRead() {
	r := gw.rnext
	gw.rnext, gw.reading = nil, true
	go func() {
		limit := gw.s.opts.Staleness / readShare
		ctx, cancel := context.WithTimeout(gw.s.bg, limit)
		r.rev, r.err = gw.s.readRevision(ctx)
		if r.err != nil && ctx.Err() != nil {
			r.err = fmt.Errorf("no answer within %v: %w", limit, r.err)
		}
		cancel()
		gw.rmu.Lock()
		gw.reading = false
		if gw.rnext != nil {
			gw.startRead()
		}
		gw.rmu.Unlock()
		close(r.done)
	}()
}

// refreshTo waits for a snapshot at revision want or later, joining the
// refresh in flight (or starting one).
func (gw *grantWatch) refreshTo(ctx context.Context, want int64) (*grantSnapshot, error) {
	s := gw.s
	ctx, cancel := context.WithTimeout(ctx, gw.s.opts.Staleness)
	defer cancel()
	for {
		f := gw.join()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, s.notCurrent(fmt.Sprintf("its grants could not be read within %v", s.opts.Staleness), ctx.Err())
		}
		if f.err != nil {
			return nil, s.notCurrent("its grants could not be read", f.err)
		}
		// A flight that began before want was read may predate it; the
		// next one reads a revision at least as new.
		if f.snap.rev >= want {
			return f.snap, nil
		}
	}
}

// join returns the refresh in flight, or starts one.
func (gw *grantWatch) join() *refreshFlight {
	gw.mu.Lock()
	defer gw.mu.Unlock()
	if gw.flight != nil {
		return gw.flight
	}
	f := &refreshFlight{done: make(chan struct{})}
	gw.flight = f
	go gw.fly(f)
	return f
}

// fly runs one refresh and publishes it. Flights never overlap, so an
// older reading never replaces a newer one.
func (gw *grantWatch) fly(f *refreshFlight) {
	s := gw.s
	ctx, cancel := context.WithTimeout(s.bg, refreshTimeout)
	defer cancel()
	prev := gw.cur.Load()
	full := gw.full.Swap(false)
	f.snap, f.err = gw.load(ctx, prev, full)
	if f.err != nil && full {
		gw.full.Store(true) // the next flight does it
	}
	if f.err == nil && f.snap != prev {
		gw.cur.Store(f.snap)
		close(prev.replaced)
	}
	if s.bg.Err() == nil { // a store closing is not a database failing
		gw.report(f.err)
	}
	gw.mu.Lock()
	gw.flight = nil
	gw.mu.Unlock()
	close(f.done)
}

// load reads what changed since prev: nothing when the revision has not
// moved, the rows above prev's revision when it moved on, and every live
// grant on the first load, when asked, or when the revision went back (a
// database restored from a backup).
func (gw *grantWatch) load(ctx context.Context, prev *grantSnapshot, full bool) (*grantSnapshot, error) {
	s := gw.s
	rev, err := s.readRevision(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case full || prev.rev < 0 || rev < prev.rev:
		return gw.loadAll(ctx, rev)
	case rev == prev.rev:
		return prev, nil
	}
	return gw.loadSince(ctx, prev, rev)
}

// loadAll reads every live grant.
func (gw *grantWatch) loadAll(ctx context.Context, rev int64) (*grantSnapshot, error) {
	keys := map[session.ApprovalKey][]liveGrant{}
	count := 0
	err := gw.scanRows(ctx, "SELECT "+grantColumns+" FROM tw_grants WHERE revoked_at IS NULL", nil, func(r grantRow) {
		keys[r.g.Key] = append(keys[r.g.Key], live(r.g))
		count++
	})
	if err != nil {
		return nil, err
	}
	return newSnapshot(rev, keys, count), nil
}

// loadSince applies the rows written above prev's revision to a copy of
// prev. The copy is shallow: only the changed keys get new slices, so a
// published snapshot's slices are never written.
func (gw *grantWatch) loadSince(ctx context.Context, prev *grantSnapshot, rev int64) (*grantSnapshot, error) {
	var changed []session.SharedGrant
	err := gw.scanRows(ctx, "SELECT "+grantColumns+" FROM tw_grants WHERE rev > ?", []any{prev.rev}, func(r grantRow) {
		changed = append(changed, r.g)
	})
	if err != nil {
		return nil, err
	}
	keys, count := maps.Clone(prev.keys), prev.count
	for _, g := range changed {
		old := keys[g.Key]
		next := make([]liveGrant, 0, len(old)+1)
		for _, l := range old {
			if l.id != g.ID {
				next = append(next, l)
			}
		}
		count -= len(old) - len(next)
		if g.RevokedAt.IsZero() {
			next = append(next, live(g))
			count++
		}
		if len(next) == 0 {
			delete(keys, g.Key)
		} else {
			keys[g.Key] = next
		}
	}
	return newSnapshot(rev, keys, count), nil
}

func (gw *grantWatch) scanRows(ctx context.Context, q string, args []any, each func(grantRow)) error {
	s := gw.s
	rows, err := s.db.QueryContext(ctx, s.rebind(q), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := int64(0)
	for rows.Next() {
		r, err := scanGrant(rows)
		if err != nil {
			return err
		}
		each(r)
		n++
	}
	gw.rowsRead.Add(n)
	return rows.Err()
}

func live(g session.SharedGrant) liveGrant {
	return liveGrant{id: g.ID, scope: g.Scope, args: g.ArgsDigest}
}

// report logs when refreshing starts failing and when it works again
// (once each, not every poll).
func (gw *grantWatch) report(err error) {
	s := gw.s
	switch {
	case err != nil && !gw.failing.Swap(true):
		s.log.Warn("store: cannot read the shared grants; remembered approvals are set aside (asked again) until it can",
			"store", s.url, "error", s.scrub(err).Error())
	case err == nil && gw.failing.Swap(false):
		s.log.Info("store: the shared grants are current again", "store", s.url)
	}
}

// readRevision reads the store's revision.
func (s *Store) readRevision(ctx context.Context) (int64, error) {
	var rev int64
	err := s.db.QueryRowContext(ctx, "SELECT rev FROM tw_revision WHERE id = 1").Scan(&rev)
	return rev, err
}

// notCurrent is Covers' error when it cannot confirm the snapshot is
// current: it wraps session.ErrNotCurrent and says why.
func (s *Store) notCurrent(why string, err error) error {
	return s.scrub(fmt.Errorf("store %s: %w: %s: %w", s.url, session.ErrNotCurrent, why, err))
}

// watchGrants keeps the snapshot fresh until the store closes: on every
// wake-up and every Options.Poll, a refresh that reads only what changed
// (nothing, when the revision has not moved).
func (s *Store) watchGrants() {
	gw := &s.grants
	poll := time.NewTicker(s.opts.Poll)
	defer poll.Stop()
	full := time.NewTicker(fullReloadEvery)
	defer full.Stop()
	// The wake-up is taken before each refresh reads, so that a change
	// committed during the read still wakes the next round.
	wake := gw.nextWake()
	for {
		select {
		case <-s.bg.Done():
			return
		case <-wake:
		case <-poll.C:
		case <-full.C:
			gw.full.Store(true)
		}
		wake = gw.nextWake()
		f := gw.join()
		select {
		case <-f.done:
		case <-s.bg.Done():
			return
		}
	}
}

// nextWake is the channel the watcher's next wake-up closes (nil, which
// never fires, when it only polls).
func (gw *grantWatch) nextWake() <-chan struct{} {
	if gw.pollOnly {
		return nil
	}
	return gw.s.wake(TopicRevision)
}
