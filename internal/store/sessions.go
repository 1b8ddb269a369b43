package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolwarden/toolwarden/internal/session"
)

// Session state shared between processes (session.Shared): one row per
// session, its state as JSON and a revision of its own that every save
// moves by one. A load that names the revision it last saw reads nothing
// when the row has not moved since; a save merges under the row's lock,
// so that two processes saving at once both keep what they changed
// (session.MergeState). Sessions do not move tw_revision: that is the
// grants' revision, which every decision that would ask reads.

// LoadSession returns session id's stored state when its revision is
// newer than since; changed is false when it is not, or when nothing is
// stored for id. A row that cannot be read as a session state is an
// error: the caller denies the session's calls rather than deciding them
// without its taint.
func (s *Store) LoadSession(ctx context.Context, id string, since int64) (st session.State, rev int64, changed bool, err error) {
	var data string
	err = s.db.QueryRowContext(ctx, s.rebind("SELECT state, rev FROM tw_sessions WHERE id = ? AND rev > ?"), id, since).Scan(&data, &rev)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return session.State{}, since, false, nil
	case err != nil:
		return session.State{}, 0, false, s.sessionErr("load session", id, err)
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
	// session queue on one row instead of one failing on the key.
	empty, _ := json.Marshal(session.State{Version: 1, ID: mine.ID})
	if _, err := tx.ExecContext(ctx, s.rebind("INSERT INTO tw_sessions (id, state, rev, updated_at) VALUES (?, ?, 0, ?) ON CONFLICT (id) DO NOTHING"),
		mine.ID, string(empty), now); err != nil {
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

func (s *Store) sessionErr(what, id string, err error) error {
	return s.scrub(fmt.Errorf("store %s: %s %q: %w", s.url, what, id, err))
}

// The store is what a host shares (host.Settings.WithStore).
var _ session.Shared = (*Store)(nil)
