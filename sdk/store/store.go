// Package store opens the shared store a Go program's toolwarden hosts
// keep "always" approvals and session state in, so that several guards,
// or a guard and a developer's `toolwarden wrap`, `proxy` and hook on the
// same store, share what a human approved and see a revoke on their next
// call. It is the one public way to the store: importing it links the
// SQLite and Postgres drivers; a program that does not share links
// neither.
//
//	st, err := store.Open(ctx, "sqlite:/home/me/.local/state/toolwarden/store.db")
//	if err != nil { ... }
//	defer st.Close()
//	h, err := host.New(ctx, cfg, host.Defaults().WithStore(st))
//
// URLs are the ones `toolwarden --store` takes: sqlite:PATH (also
// sqlite:///abs/path) or postgres://USER:PASSWORD@HOST/DB (postgresql://
// too). Errors and URL name the URL with any password hidden.
package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/toolwarden/toolwarden/internal/session"
	istore "github.com/toolwarden/toolwarden/internal/store"
)

// Store is an open shared store. Hand it to host.Settings.WithStore; close
// it after every host built on it is closed. It is safe for concurrent
// use, and one Store may serve several hosts of the program.
type Store struct {
	s *istore.Store
}

// Open connects to the store url names and brings its schema up to date
// (migrations run once, whichever process opens first). A database whose
// schema is newer than this build knows is refused and left untouched.
func Open(ctx context.Context, url string) (*Store, error) {
	s, err := istore.Open(ctx, url, istore.Options{})
	if err != nil {
		return nil, fmt.Errorf("the shared store did not open: %w (%s)", err, openCheck(url))
	}
	return &Store{s: s}, nil
}

// openCheck says what to check when Open fails, by engine, as the
// command's --store does.
func openCheck(url string) string {
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(url)), "sqlite:") {
		return "the file's directory must be writable by this user"
	}
	return "the Postgres server must be reachable and accept these credentials"
}

// Close closes the store; closing again does nothing. Close the hosts
// built on it first: a host's next decision that needs the store after
// Close is denied (nothing is allowed on state it cannot confirm).
func (s *Store) Close() error { return s.s.Close() }

// URL is the store's URL with any password hidden.
func (s *Store) URL() string { return s.s.URL() }

// Engine is "sqlite" or "postgres".
func (s *Store) Engine() string { return s.s.Engine() }

// Revoke revokes every live "always" grant for tool of server, whoever it
// covers, recording by as who revoked it (grants are never deleted, so
// `toolwarden approvals list --store URL --all` still shows them). Every
// host on the store sees the revoke before its next decision that would
// use the grant. It returns how many grants it revoked.
func (s *Store) Revoke(ctx context.Context, server, tool, by string) (int, error) {
	if server == "" || tool == "" {
		return 0, fmt.Errorf("store %s: Revoke needs a server and a tool (got %q, %q); to revoke more at once use `toolwarden approvals revoke --store URL`", s.URL(), server, tool)
	}
	return s.s.Revoke(ctx, istore.GrantFilter{Server: server, Tool: tool}, by)
}

// The methods below make a Store the host's session.Shared. They are
// called by the host, their types are internal, and they are not part of
// the promised API: use the store through host.Settings.WithStore.

// Covers is for the host (session.Shared).
func (s *Store) Covers(ctx context.Context, w session.Who, k session.ApprovalKey, argsDigest string) (bool, error) {
	return s.s.Covers(ctx, w, k, argsDigest)
}

// AddGrant is for the host (session.Shared).
func (s *Store) AddGrant(ctx context.Context, g session.SharedGrant) (session.SharedGrant, error) {
	return s.s.AddGrant(ctx, g)
}

// LoadSession is for the host (session.Shared).
func (s *Store) LoadSession(ctx context.Context, id string, since int64) (session.State, int64, bool, error) {
	return s.s.LoadSession(ctx, id, since)
}

// SaveSession is for the host (session.Shared).
func (s *Store) SaveSession(ctx context.Context, st session.State) (session.State, int64, error) {
	return s.s.SaveSession(ctx, st)
}

// A Store is what host.Settings.WithStore takes.
var _ session.Shared = (*Store)(nil)
