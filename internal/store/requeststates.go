package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Outstanding 2026-07-28 request states (channel.NewSharedSigner): a row
// per state minted and not yet redeemed. The row is the state's single
// use: whichever replica's DELETE returns it redeems the state, and no
// other can, since a row is deleted once.

// stateSweepOdds: one mint in this many first deletes the expired rows
// (states minted and never answered), so the table holds about a state
// TTL's worth of asks without a timer or per-Store bookkeeping.
const stateSweepOdds = 32

// MintState records nonce as an outstanding request state until expires,
// with parts (the binding's digests, kept to explain a refused answer).
func (s *Store) MintState(ctx context.Context, nonce string, expires time.Time, parts string) error {
	if rand.N(stateSweepOdds) == 0 {
		s.sweepStates(ctx)
	}
	_, err := s.db.ExecContext(ctx, s.rebind("INSERT INTO tw_request_states (nonce, expires_at, parts) VALUES (?, ?, ?)"),
		nonce, expires.UnixNano(), parts)
	if err != nil {
		return fmt.Errorf("store %s: record a request state: %w", s.url, err)
	}
	return nil
}

// RedeemState deletes nonce's row and returns its parts. ok is true for
// the one caller whose DELETE returned the row, and only when the row had
// not expired at now (an expired row is deleted all the same). A state
// already redeemed, or never minted, is not ok.
func (s *Store) RedeemState(ctx context.Context, nonce string, now time.Time) (parts string, ok bool, err error) {
	var expires int64
	err = s.db.QueryRowContext(ctx, s.rebind("DELETE FROM tw_request_states WHERE nonce = ? RETURNING parts, expires_at"), nonce).Scan(&parts, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("store %s: redeem a request state: %w", s.url, err)
	}
	if now.UnixNano() >= expires {
		return "", false, nil
	}
	return parts, true, nil
}

// sweepStates deletes the expired states. A failed sweep is logged and
// left to a later mint: the rows it missed are refused as expired anyway.
func (s *Store) sweepStates(ctx context.Context) {
	if _, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM tw_request_states WHERE expires_at <= ?"), s.now().UnixNano()); err != nil {
		s.log.Warn("could not delete expired request states; a later ask will try again", "store", s.url, "err", err)
	}
}
