package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
)

// Session state shared between processes (session.Shared): one row per
// session, its state as JSON and a revision of its own that every save
// moves by one. A load that names the revision it last saw reads nothing
// when the row has not moved since; a save merges under the row's lock,
// so that two processes saving at once both keep what they changed
// (session.MergeState). Sessions do not move tw_revision: that is the
// grants' revision, which every decision that would ask reads.
//
// Rows are not kept for good: a session no process has used for
// SessionRetention is deleted by a sweep that one save in
// sessionSweepOdds runs first (as the asks' and request states' sweeps
// do, without a timer). "Used" is any load or save: a load that finds
// the row's updated_at older than sessionTouchEvery moves it to now, so
// a session in use is never swept, however long it goes without a
// change. A row made again after a sweep starts at a revision taken from
// the clock, above any its swept predecessor reached, so a process that
// still remembers the old revision takes in the new row's changes.

// SessionRetention is how long a session row outlives its last use: a
// week. Far past what serve still accepts (a 2025-era session id is
// refused 24 h after it was issued and ended after an idle hour), and a
// margin for what has no end (a 2026-07-28 conversation, an agent's
// session resumed through the hook or the sdk) taken up again days
// later; beyond it, such a session starts afresh (the hook's own session
// file still carries its taint).
const SessionRetention = 7 * 24 * time.Hour

const (
	// sessionSweepOdds: one save in this many first runs the sweep.
	sessionSweepOdds = 32
	// sessionTouchEvery bounds how often a load writes to say the
	// session is in use: at most once an hour per session.
	sessionTouchEvery = time.Hour
)

// LoadSession returns session id's stored state when its revision is
// newer than since; changed is false when it is not, or when nothing is
// stored for id. A row that cannot be read as a session state is an
// error: the caller denies the session's calls rather than deciding them
// without its taint.
func (s *Store) LoadSession(ctx context.Context, id string, since int64) (st session.State, rev int64, changed bool, err error) {
	// The state is read only when the revision moved; the revision and
	// the time of last use always, for the touch below. On Postgres the
	// read shares a round trip with concurrent loads (sessions_load.go).
	row, err := s.readSession(ctx, id, since)
	data, rev, updated := row.data, row.rev, row.updated
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// rev 0: no row at all (never saved, or swept), which a holder
		// of a later revision must tell from "unchanged".
		return session.State{}, 0, false, nil
	case err != nil:
		return session.State{}, 0, false, s.sessionErr("load session", id, err)
	}
	s.touchSession(ctx, id, updated)
	if rev <= since {
		return session.State{}, since, false, nil
	}
	st, err = decodeRow(id, data)
	if err != nil {
		return session.State{}, 0, false, s.scrub(fmt.Errorf("store %s: %w", s.url, err))
	}
	return st, rev, true, nil
}

// SaveSession merges st into the stored state of st.ID under the row's
// lock (FOR UPDATE on Postgres; SQLite's write transaction holds the
// database) and writes the merge at the next revision.
func (s *Store) SaveSession(ctx context.Context, st session.State) (merged session.State, rev int64, err error) {
	if st.ID == "" {
		return session.State{}, 0, fmt.Errorf("store %s: save session: the state names no session", s.url)
	}
	if rand.N(sessionSweepOdds) == 0 {
		s.sweepSessions(ctx)
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		merged, rev, err = s.saveSessionTx(ctx, tx, st)
		return err
	})
	if err != nil {
		return session.State{}, 0, s.sessionErr("save session", st.ID, err)
	}
	return merged, rev, nil
}

func (s *Store) saveSessionTx(ctx context.Context, tx *sql.Tx, mine session.State) (session.State, int64, error) {
	now := s.now().UnixNano()
	// The row exists before it is locked, so that two first saves of a
	// session queue on one row instead of one failing on the key. Its
	// first revision is the clock's: a row made again after a sweep then
	// starts above every revision of the one swept (a week and more of
	// nanoseconds ago), which a process may still hold as "seen".
	empty, _ := json.Marshal(session.State{Version: 1, ID: mine.ID})
	if _, err := tx.ExecContext(ctx, s.rebind("INSERT INTO tw_sessions (id, state, rev, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"),
		mine.ID, string(empty), now, now); err != nil {
		return session.State{}, 0, err
	}
	q := "SELECT state, rev FROM tw_sessions WHERE id = ?"
	if s.engine == EnginePostgres {
		q += " FOR UPDATE"
	}
	var data string
	var rev int64
	if err := tx.QueryRowContext(ctx, s.rebind(q), mine.ID).Scan(&data, &rev); err != nil {
		return session.State{}, 0, err
	}
	stored, err := decodeRow(mine.ID, data)
	if err != nil {
		return session.State{}, 0, err
	}
	merged := session.MergeState(stored, mine)
	out, err := json.Marshal(merged)
	if err != nil {
		return session.State{}, 0, err
	}
	rev++
	if _, err := tx.ExecContext(ctx, s.rebind("UPDATE tw_sessions SET state = ?, rev = ?, updated_at = ? WHERE id = ?"),
		string(out), rev, now, mine.ID); err != nil {
		return session.State{}, 0, err
	}
	return merged, rev, nil
}

// decodeRow reads a stored session state. A damaged row is left as it is
// (a save refuses to merge into it): overwriting it would forget the
// session's taint.
func decodeRow(id, data string) (session.State, error) {
	st, err := session.DecodeState([]byte(data))
	if err != nil {
		return session.State{}, fmt.Errorf("session %q: its stored state cannot be used (%v): it is kept as it is and the session's calls are denied; delete its row from tw_sessions to start the session over", id, err)
	}
	return st, nil
}

// touchSession records that session id is in use when its row was last
// written more than sessionTouchEvery ago (updated), so that the sweep
// never takes a session that is used but unchanged. A failed touch is
// logged: the load's answer stands, and the next load tries again.
func (s *Store) touchSession(ctx context.Context, id string, updated int64) {
	now := s.now()
	if now.Sub(time.Unix(0, updated)) < sessionTouchEvery {
		return
	}
	if _, err := s.db.ExecContext(ctx, s.rebind("UPDATE tw_sessions SET updated_at = ? WHERE id = ? AND updated_at = ?"), now.UnixNano(), id, updated); err != nil {
		s.log.Warn("could not mark a session in use; a later load will try again", "store", s.url, "session", id, "err", err)
	}
}

// sweepSessions deletes the sessions no process used for
// SessionRetention. A failed sweep is logged and left to a later save.
func (s *Store) sweepSessions(ctx context.Context) {
	if _, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM tw_sessions WHERE updated_at < ?"), s.now().Add(-SessionRetention).UnixNano()); err != nil {
		s.log.Warn("could not delete sessions unused for the retention; a later save will try again", "store", s.url, "retention", SessionRetention, "err", err)
	}
}

func (s *Store) sessionErr(what, id string, err error) error {
	return s.scrub(fmt.Errorf("store %s: %s %q: %w", s.url, what, id, err))
}

// The store is what a host shares (host.Settings.WithStore).
var _ session.Shared = (*Store)(nil)
