package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/session"
)

// "Always" grants: one row per grant, never deleted. A revoke sets
// revoked_at and revoked_by, so the table is also the history of who
// allowed what and who took it back. Every write moves the store's
// revision in its own transaction (bump), which is what lets every
// replica's Covers see it before its next decision (watch.go).

// maxArgsPreview bounds the preview a grant carries: it is shown to a
// person, never matched, and a runaway one must not bloat every listing.
const maxArgsPreview = 16 << 10

// GrantFilter selects grants for Grants and Revoke. Every field that is
// set must match; the zero filter selects every live grant.
type GrantFilter struct {
	ID        string
	App       string
	Server    string
	Connector string
	Tool      string
	// Hash is a definition hash or a prefix of one (hex).
	Hash string
	// Scope, when its Kind is set, selects the grants of exactly that
	// scope (a team-scoped filter does not select principals' grants).
	Scope session.GrantScope
	// Revoked also selects revoked grants (Grants only: Revoke never
	// touches a revoked grant again, so its first revoker stays on record).
	Revoked bool
	// All must be set for Revoke to take a filter that selects everything:
	// revoking every grant of a team is said, never implied by a filter
	// whose fields were left empty by mistake.
	All bool
}

// empty reports whether f selects every grant.
func (f GrantFilter) empty() bool {
	return f.ID == "" && f.App == "" && f.Server == "" && f.Connector == "" &&
		f.Tool == "" && f.Hash == "" && f.Scope.Kind == ""
}

// where is f as a WHERE clause over tw_grants (with ? placeholders) and
// its arguments.
func (f GrantFilter) where() (string, []any, error) {
	var conds []string
	var args []any
	eq := func(col, v string) {
		if v != "" {
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	eq("id", f.ID)
	eq("app", f.App)
	eq("server", f.Server)
	eq("connector", f.Connector)
	eq("tool", f.Tool)
	if h := strings.ToLower(f.Hash); h != "" {
		if len(h) > 64 || !isHex(h) {
			return "", nil, fmt.Errorf("definition hash %q is not hex (a SHA-256 or a prefix of one)", f.Hash)
		}
		if len(h) == 64 {
			eq("hash", h)
		} else {
			conds = append(conds, "substr(hash, 1, ?) = ?")
			args = append(args, len(h), h)
		}
	}
	if f.Scope.Kind != "" {
		if err := checkScope(f.Scope); err != nil {
			return "", nil, err
		}
		conds = append(conds, "scope_kind = ?", "scope_name = ?")
		args = append(args, f.Scope.Kind, f.Scope.Name)
	}
	if !f.Revoked {
		conds = append(conds, "revoked_at IS NULL")
	}
	if len(conds) == 0 {
		return "", nil, nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args, nil
}

// grantColumns are read by every query that returns grants, in the order
// scanGrant takes them.
const grantColumns = "id, app, server, connector, tool, hash, scope_kind, scope_name, args_digest, args_preview, granted_by, granted_at, revoked_at, revoked_by, rev"

// grantRow is one row of tw_grants.
type grantRow struct {
	g   session.SharedGrant
	rev int64
}

type rowScanner interface{ Scan(dest ...any) error }

func scanGrant(r rowScanner) (grantRow, error) {
	var (
		row       grantRow
		k         = &row.g.Key
		grantedAt int64
		revokedAt sql.NullInt64
		revokedBy sql.NullString
	)
	err := r.Scan(&row.g.ID, &k.App, &k.Server, &k.Connector, &k.Tool, &k.Hash,
		&row.g.Scope.Kind, &row.g.Scope.Name, &row.g.ArgsDigest, &row.g.ArgsPreview,
		&row.g.GrantedBy, &grantedAt, &revokedAt, &revokedBy, &row.rev)
	if err != nil {
		return grantRow{}, err
	}
	row.g.GrantedAt = time.Unix(0, grantedAt).UTC()
	if revokedAt.Valid {
		row.g.RevokedAt = time.Unix(0, revokedAt.Int64).UTC()
		row.g.RevokedBy = revokedBy.String
	}
	return row, nil
}

// AddGrant stores g as a live grant and returns it as stored (ID and
// GrantedAt filled in when empty). A live grant with the same key, scope
// and arguments already covers what g would: it is returned instead and
// nothing is written, so "always" answered twice (on two replicas) leaves
// one row, and one revoke ends it.
func (s *Store) AddGrant(ctx context.Context, g session.SharedGrant) (session.SharedGrant, error) {
	g.Key.Hash = strings.ToLower(g.Key.Hash)
	if err := checkGrant(g); err != nil {
		return session.SharedGrant{}, fmt.Errorf("store %s: not adding the grant: %w", s.url, err)
	}
	if g.ID == "" {
		g.ID = newID()
	}
	if g.GrantedAt.IsZero() {
		g.GrantedAt = s.now()
	}
	g.GrantedAt = time.Unix(0, g.GrantedAt.UnixNano()).UTC()
	var existing *session.SharedGrant
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		existing = nil
		// The revision first: its row lock queues concurrent grant writers,
		// so the look for a twin below sees every grant committed before.
		rev, err := s.bump(ctx, tx)
		if err != nil {
			return err
		}
		twin, err := s.liveTwin(ctx, tx, g)
		if err != nil {
			return err
		}
		if twin != nil {
			existing = twin
			return errNothingWritten
		}
		_, err = tx.ExecContext(ctx, s.rebind(`INSERT INTO tw_grants (`+grantColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)`),
			g.ID, g.Key.App, g.Key.Server, g.Key.Connector, g.Key.Tool, g.Key.Hash,
			g.Scope.Kind, g.Scope.Name, g.ArgsDigest, g.ArgsPreview, g.GrantedBy, g.GrantedAt.UnixNano(), rev)
		return err
	})
	switch {
	case errors.Is(err, errNothingWritten):
		return *existing, nil
	case err != nil:
		return session.SharedGrant{}, s.scrub(fmt.Errorf("store %s: add a grant for %s/%s: %w", s.url, g.Key.Server, g.Key.Tool, err))
	}
	return g, nil
}

// errNothingWritten rolls back a transaction that found nothing to do, so
// that it does not move the revision (every replica would refresh for
// nothing).
var errNothingWritten = errors.New("nothing to write")

// liveTwin returns the live grant that covers exactly what g would, if
// any.
func (s *Store) liveTwin(ctx context.Context, tx *sql.Tx, g session.SharedGrant) (*session.SharedGrant, error) {
	r, err := scanGrant(tx.QueryRowContext(ctx, s.rebind(`SELECT `+grantColumns+` FROM tw_grants
		WHERE app = ? AND server = ? AND connector = ? AND tool = ? AND hash = ?
		AND scope_kind = ? AND scope_name = ? AND args_digest = ? AND revoked_at IS NULL
		ORDER BY granted_at LIMIT 1`),
		g.Key.App, g.Key.Server, g.Key.Connector, g.Key.Tool, g.Key.Hash, g.Scope.Kind, g.Scope.Name, g.ArgsDigest))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return &r.g, nil
}

// Grants returns the grants f selects (live ones only unless f.Revoked),
// sorted by server, tool and time granted.
func (s *Store) Grants(ctx context.Context, f GrantFilter) ([]session.SharedGrant, error) {
	where, args, err := f.where()
	if err != nil {
		return nil, fmt.Errorf("store %s: list grants: %w", s.url, err)
	}
	rows, err := s.db.QueryContext(ctx, s.rebind("SELECT "+grantColumns+" FROM tw_grants"+where+" ORDER BY server, tool, granted_at, id"), args...)
	if err != nil {
		return nil, s.scrub(fmt.Errorf("store %s: list grants: %w", s.url, err))
	}
	defer rows.Close()
	out := []session.SharedGrant{}
	for rows.Next() {
		r, err := scanGrant(rows)
		if err != nil {
			return nil, s.scrub(fmt.Errorf("store %s: list grants: %w", s.url, err))
		}
		out = append(out, r.g)
	}
	if err := rows.Err(); err != nil {
		return nil, s.scrub(fmt.Errorf("store %s: list grants: %w", s.url, err))
	}
	return out, nil
}

// Revoke ends every live grant f selects, recording by as the revoker,
// and reports how many it ended. Every replica stops honouring them
// before its next decision that would use them (Covers confirms the
// revision first). A filter that selects everything needs f.All.
func (s *Store) Revoke(ctx context.Context, f GrantFilter, by string) (int, error) {
	f.Revoked = false
	if f.empty() && !f.All {
		return 0, fmt.Errorf("store %s: revoke: the filter selects every grant; say what to revoke, or set All", s.url)
	}
	where, args, err := f.where()
	if err != nil {
		return 0, fmt.Errorf("store %s: revoke: %w", s.url, err)
	}
	var n int64
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		rev, err := s.bump(ctx, tx)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.rebind("UPDATE tw_grants SET revoked_at = ?, revoked_by = ?, rev = ?"+where),
			append([]any{s.now().UnixNano(), by, rev}, args...)...)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		if n == 0 {
			return errNothingWritten
		}
		return nil
	})
	switch {
	case errors.Is(err, errNothingWritten):
		return 0, nil
	case err != nil:
		return 0, s.scrub(fmt.Errorf("store %s: revoke grants: %w", s.url, err))
	}
	return int(n), nil
}

// Covers reports whether a live grant covers a call of k by w with
// arguments whose session.ArgsDigest is argsDigest: same app, server,
// connector and tool, the exact definition hash, a scope that takes in w,
// and no arguments bound or the very same ones. It first confirms the
// store's revision (see watch.go); when it cannot, it returns an error
// wrapping session.ErrNotCurrent and the call counts as not covered.
func (s *Store) Covers(ctx context.Context, w session.Who, k session.ApprovalKey, argsDigest string) (bool, error) {
	snap, err := s.grantWatch().current(ctx)
	if err != nil {
		return false, err
	}
	return snap.covers(w, k, argsDigest), nil
}

// checkGrant refuses a grant that could not be matched as meant.
func checkGrant(g session.SharedGrant) error {
	for _, f := range []struct{ name, v string }{
		{"app", g.Key.App}, {"server", g.Key.Server}, {"tool", g.Key.Tool}, {"definition hash", g.Key.Hash},
	} {
		if f.v == "" {
			return fmt.Errorf("the %s is empty", f.name)
		}
	}
	if len(g.Key.Hash) != 64 || !isHex(g.Key.Hash) {
		return fmt.Errorf("definition hash %q is not 64 hex digits (a SHA-256)", g.Key.Hash)
	}
	if err := checkScope(g.Scope); err != nil {
		return err
	}
	if g.ArgsDigest != "" && (len(g.ArgsDigest) != 64 || !isHex(g.ArgsDigest) || strings.ToLower(g.ArgsDigest) != g.ArgsDigest) {
		return fmt.Errorf("arguments digest %q is not 64 lowercase hex digits (session.ArgsDigest)", g.ArgsDigest)
	}
	if len(g.ArgsPreview) > maxArgsPreview || !utf8.ValidString(g.ArgsPreview) {
		return fmt.Errorf("the arguments preview is not UTF-8 text of at most %d KiB", maxArgsPreview>>10)
	}
	if !g.RevokedAt.IsZero() || g.RevokedBy != "" {
		return errors.New("it is already revoked (a grant is added live and revoked with Revoke)")
	}
	return nil
}

// checkScope refuses a scope that names nobody or names someone it cannot.
func checkScope(sc session.GrantScope) error {
	switch sc.Kind {
	case session.ScopePrincipal, session.ScopeGroup:
		if sc.Name == "" {
			return fmt.Errorf("a %s scope names no %s", sc.Kind, sc.Kind)
		}
	case session.ScopeTeam:
		if sc.Name != "" {
			return fmt.Errorf("a team scope names nobody (got %q): it covers every caller", sc.Name)
		}
	case session.ScopeLocal:
		if sc.Name != "" {
			return fmt.Errorf("a local scope names nobody (got %q): it covers the local front ends' calls, which have no caller", sc.Name)
		}
	default:
		return fmt.Errorf("unknown grant scope %q: principal, group, team or local", sc.Kind)
	}
	return nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}
