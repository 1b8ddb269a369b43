package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/session"
)

// The team inbox: asks that a replica of toolwarden serve posts and waits
// on, shown on every replica's inbox page to whoever may answer them. The
// first answer wins by one conditional UPDATE (only a row still open
// takes it), so two answers given at once on two replicas cannot both
// count. Asks are not grants: they move no revision, they only wake the
// waiters (topic "asks"), who also poll.

// maxAskBytes bounds one ask's JSON, as the local inbox bounds its files:
// the arguments are the prompt's rendering, already cut to a readable size.
const maxAskBytes = 256 << 10

// Asks are kept a day past their expiry (the audit keeps who answered
// what for good): one post in askSweepOdds first deletes the older ones,
// so the table holds about a day of asks without a timer.
const (
	askSweepOdds = 32
	askKeep      = 24 * time.Hour
)

// maxOpenAsks bounds what OpenAsks returns (oldest first): a page shows
// the oldest, and the rest once those are answered.
const maxOpenAsks = 500

// StoredAsk is one ask of the team inbox.
type StoredAsk struct {
	// Ask is the question as every channel shows it; Ask.ID is the row's id.
	Ask inbox.Ask
	// Principal is who asked (the caller of the session).
	Principal string
	// Approvers are whose answer counts, one list per level
	// (policy.Decision.ApproverLevels); none: only Principal's.
	Approvers [][]string
	// Replica is the process that posted the ask and waits on it.
	Replica string
	// Answer is the first answer, nil while the ask is open.
	Answer *AskAnswer
	// Withdrawn is when the asker stopped waiting without an answer from
	// the inbox (answered elsewhere, or gone); zero while it waits.
	Withdrawn time.Time
}

// AskAnswer is the answer an ask got from the team inbox.
type AskAnswer struct {
	Option string
	// By is who answered, as the answering replica authenticated them.
	By session.Who
	At time.Time
	// Scope is whose calls an "always" answer covers (zero otherwise).
	Scope session.GrantScope
}

// Ask states, as State reports them.
const (
	AskOpen      = "open"
	AskAnswered  = "answered"
	AskWithdrawn = "withdrawn"
	AskExpired   = "expired"
)

// State is the ask's state at now: answered and withdrawn are final; an
// ask neither answered nor withdrawn by its expiry has expired.
func (a *StoredAsk) State(now time.Time) string {
	switch {
	case a.Answer != nil:
		return AskAnswered
	case !a.Withdrawn.IsZero():
		return AskWithdrawn
	case !now.Before(a.Ask.Expires):
		return AskExpired
	}
	return AskOpen
}

// PostAsk publishes a (its ID is minted here) as principal's, with whose
// answer counts, and returns it as stored. It must offer options, name a
// tool and say when it expires.
func (s *Store) PostAsk(ctx context.Context, a inbox.Ask, principal string, approvers [][]string) (inbox.Ask, error) {
	if rand.N(askSweepOdds) == 0 {
		s.sweepAsks(ctx)
	}
	a.ID = newID()
	if a.Created.IsZero() {
		a.Created = s.now().UTC()
	}
	if err := checkAsk(&a); err != nil {
		return inbox.Ask{}, fmt.Errorf("store %s: post an ask: %w", s.url, err)
	}
	if approvers == nil {
		approvers = [][]string{}
	}
	body, err := json.Marshal(a)
	if err != nil {
		return inbox.Ask{}, fmt.Errorf("store %s: post an ask: %w", s.url, err)
	}
	if len(body) > maxAskBytes {
		return inbox.Ask{}, fmt.Errorf("store %s: post an ask: it is %d bytes, more than %d: cut its arguments as the prompt does", s.url, len(body), maxAskBytes)
	}
	levels, _ := json.Marshal(approvers)
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO tw_asks (id, session, principal, ask, approvers, replica, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`),
			a.ID, a.Session, principal, string(body), string(levels), s.opts.Replica, a.Created.UnixNano(), a.Expires.UnixNano())
		if err != nil {
			return err
		}
		return s.notify(ctx, tx, TopicAsks)
	})
	if err != nil {
		return inbox.Ask{}, fmt.Errorf("store %s: post an ask: %w", s.url, err)
	}
	return a, nil
}

// sweepAsks deletes the asks that expired more than askKeep ago. A
// failed sweep is logged and left to a later post.
func (s *Store) sweepAsks(ctx context.Context) {
	if _, err := s.db.ExecContext(ctx, s.rebind("DELETE FROM tw_asks WHERE expires_at <= ?"), s.now().Add(-askKeep).UnixNano()); err != nil {
		s.log.Warn("could not delete old asks; a later post will try again", "store", s.url, "err", err)
	}
}

// checkAsk refuses an ask no inbox could show or answer.
func checkAsk(a *inbox.Ask) error {
	switch {
	case a.Tool == "":
		return errors.New("the ask names no tool")
	case a.Expires.IsZero():
		return errors.New("the ask has no expiry (set Expires to when the call stops waiting)")
	case len(a.Options) == 0:
		return errors.New("the ask offers no options")
	}
	return nil
}

// AnswerAsk records option as the answer of ask id by by, with scope for
// an "always" answer (zero otherwise). won is true for the one answer
// that counts: an ask already answered, withdrawn or expired takes none
// (won false, no error). The caller checks, before, that by may answer
// and that the ask offers option; the waiting replica checks again.
func (s *Store) AnswerAsk(ctx context.Context, id, option string, by session.Who, scope session.GrantScope) (won bool, err error) {
	groups, _ := json.Marshal(nonNil(by.Groups))
	var grant sql.NullString
	if scope.Kind != "" {
		b, _ := json.Marshal(scope)
		grant = sql.NullString{String: string(b), Valid: true}
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		now := s.now().UnixNano()
		res, err := tx.ExecContext(ctx, s.rebind(`UPDATE tw_asks SET answer = ?, answered_by = ?, answered_groups = ?, answered_at = ?, grant_scope = ?
			WHERE id = ? AND answered_at IS NULL AND withdrawn_at IS NULL AND expires_at > ?`),
			option, by.Principal, string(groups), now, grant, id, now)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if won = n == 1; !won {
			return nil
		}
		return s.notify(ctx, tx, TopicAsks)
	})
	if err != nil {
		return false, fmt.Errorf("store %s: answer ask %s: %w", s.url, id, err)
	}
	return won, nil
}

func nonNil(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// WithdrawAsk marks ask id withdrawn, unless it was answered first: no
// answer counts after it, and the inbox pages stop showing it. withdrawn
// is true when this call withdrew it, false when it was answered or
// withdrawn already (the store decides which came first: GetAsk says).
func (s *Store) WithdrawAsk(ctx context.Context, id string) (withdrawn bool, err error) {
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, s.rebind(`UPDATE tw_asks SET withdrawn_at = ? WHERE id = ? AND answered_at IS NULL AND withdrawn_at IS NULL`),
			s.now().UnixNano(), id)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if withdrawn = n == 1; err != nil || !withdrawn {
			return err
		}
		return s.notify(ctx, tx, TopicAsks)
	})
	if err != nil {
		return false, fmt.Errorf("store %s: withdraw ask %s: %w", s.url, id, err)
	}
	return withdrawn, nil
}

// askColumns are the columns scanAsk reads, in its order.
const askColumns = `id, principal, ask, approvers, replica, answer, answered_by, answered_groups, answered_at, grant_scope, withdrawn_at`

// GetAsk returns ask id, whatever its state; an unknown id is an error
// wrapping inbox.ErrUnknownAsk.
func (s *Store) GetAsk(ctx context.Context, id string) (StoredAsk, error) {
	row := s.db.QueryRowContext(ctx, s.rebind(`SELECT `+askColumns+` FROM tw_asks WHERE id = ?`), id)
	a, err := scanAsk(row)
	if errors.Is(err, sql.ErrNoRows) {
		return StoredAsk{}, fmt.Errorf("store %s: ask %s: %w", s.url, id, inbox.ErrUnknownAsk)
	}
	if err != nil {
		return StoredAsk{}, fmt.Errorf("store %s: ask %s: %w", s.url, id, err)
	}
	return a, nil
}

// OpenAsks returns the asks neither answered, withdrawn nor expired,
// oldest first (at most 500). more is how many more are open.
func (s *Store) OpenAsks(ctx context.Context) (asks []StoredAsk, more int, err error) {
	now := s.now().UnixNano()
	rows, err := s.db.QueryContext(ctx, s.rebind(`SELECT `+askColumns+` FROM tw_asks
		WHERE answered_at IS NULL AND withdrawn_at IS NULL AND expires_at > ?
		ORDER BY created_at, id`), now)
	if err != nil {
		return nil, 0, fmt.Errorf("store %s: list the open asks: %w", s.url, err)
	}
	defer rows.Close()
	for rows.Next() {
		if len(asks) == maxOpenAsks {
			more++
			continue
		}
		a, err := scanAsk(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("store %s: list the open asks: %w", s.url, err)
		}
		asks = append(asks, a)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store %s: list the open asks: %w", s.url, err)
	}
	return asks, more, nil
}

// WaitAsk blocks until ask id is answered (its answer), withdrawn
// (inbox.ErrWithdrawn), expired (inbox.ErrExpired) or ctx ends. A wake-up
// (an answer committed here, or a Postgres notification) makes it look at
// once; it also looks every Options.Poll, since notifications can be lost
// and SQLite has none between processes. A failed read is retried at the
// next look: the answer is only late, never lost.
func (s *Store) WaitAsk(ctx context.Context, id string) (AskAnswer, error) {
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	var expire <-chan time.Time
	expired := false
	for {
		woken := s.wake(TopicAsks) // before the read: a wake-up after it is not missed
		a, err := s.GetAsk(ctx, id)
		switch {
		case errors.Is(err, inbox.ErrUnknownAsk):
			return AskAnswer{}, err
		case err != nil && ctx.Err() != nil:
			return AskAnswer{}, ctx.Err()
		case err != nil && expired:
			// The last look failed: no answer is known, and the asker stops
			// waiting now (fail closed: the call is not made).
			return AskAnswer{}, fmt.Errorf("%w (its last state could not be read: %v)", inbox.ErrExpired, err)
		case err != nil:
			s.log.Warn("cannot read a pending ask; looking again", "store", s.url, "ask", id, "err", err)
		default:
			switch a.State(s.now()) {
			case AskAnswered:
				return *a.Answer, nil
			case AskWithdrawn:
				return AskAnswer{}, inbox.ErrWithdrawn
			case AskExpired:
				return AskAnswer{}, inbox.ErrExpired
			}
			if expire == nil && !expired {
				t := time.NewTimer(a.Ask.Expires.Sub(s.now()))
				defer t.Stop()
				expire = t.C
			}
		}
		select {
		case <-ctx.Done():
			return AskAnswer{}, ctx.Err()
		case <-woken:
		case <-tick.C:
		case <-expire:
			expire, expired = nil, true // one last look decides
		}
	}
}

// askScanner is *sql.Row or *sql.Rows.
type askScanner interface{ Scan(...any) error }

func scanAsk(r askScanner) (StoredAsk, error) {
	var (
		id, principal, body, levels, replica string
		answer, by, groups, grant            sql.NullString
		answeredAt, withdrawnAt              sql.NullInt64
	)
	if err := r.Scan(&id, &principal, &body, &levels, &replica, &answer, &by, &groups, &answeredAt, &grant, &withdrawnAt); err != nil {
		return StoredAsk{}, err
	}
	a := StoredAsk{Principal: principal, Replica: replica}
	if err := json.Unmarshal([]byte(body), &a.Ask); err != nil {
		return StoredAsk{}, fmt.Errorf("ask %s: its question does not decode: %w", id, err)
	}
	a.Ask.ID = id
	if err := json.Unmarshal([]byte(levels), &a.Approvers); err != nil {
		return StoredAsk{}, fmt.Errorf("ask %s: its approvers do not decode: %w", id, err)
	}
	if answeredAt.Valid {
		ans := &AskAnswer{Option: answer.String, By: session.Who{Principal: by.String}, At: time.Unix(0, answeredAt.Int64)}
		if groups.Valid && groups.String != "" {
			if err := json.Unmarshal([]byte(groups.String), &ans.By.Groups); err != nil {
				return StoredAsk{}, fmt.Errorf("ask %s: its answerer's groups do not decode: %w", id, err)
			}
		}
		if grant.Valid && grant.String != "" {
			if err := json.Unmarshal([]byte(grant.String), &ans.Scope); err != nil {
				return StoredAsk{}, fmt.Errorf("ask %s: its grant scope does not decode: %w", id, err)
			}
		}
		a.Answer = ans
	}
	if withdrawnAt.Valid {
		a.Withdrawn = time.Unix(0, withdrawnAt.Int64)
	}
	return a, nil
}
