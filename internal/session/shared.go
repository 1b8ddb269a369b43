package session

import (
	"context"
	"errors"
	"time"
)

// Who is the caller a shared "always" grant is matched against: a
// principal's name and groups as `serve` authenticated them, or the one
// local user of wrap, proxy, the hook and the sdk ("" principal: only
// team and local grants take it in).
type Who struct {
	Principal string
	Groups    []string
}

// Scopes of a shared "always" grant: whose calls it covers.
const (
	// ScopePrincipal covers the calls of one principal (Name).
	ScopePrincipal = "principal"
	// ScopeGroup covers the calls of every member of one group (Name).
	ScopeGroup = "group"
	// ScopeTeam covers every caller of the store (Name is empty).
	ScopeTeam = "team"
	// ScopeLocal covers the calls of the local front ends only (wrap,
	// proxy, the hook, the sdk: callers with no principal; Name is
	// empty). It is what an "always" answered without a caller grants,
	// so that one developer's local answer, in a store `serve` shares,
	// opens nothing to serve's callers, who always have a name.
	ScopeLocal = "local"
)

// GrantScope is whose calls a shared grant covers.
type GrantScope struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
}

// Covers reports whether the scope takes in a call by w.
func (g GrantScope) Covers(w Who) bool {
	switch g.Kind {
	case ScopeTeam:
		return true
	case ScopeLocal:
		return w.Principal == ""
	case ScopePrincipal:
		return g.Name == w.Principal
	case ScopeGroup:
		for _, x := range w.Groups {
			if x == g.Name {
				return true
			}
		}
	}
	return false
}

// SharedGrant is one "always" approval in a shared store: bound to one
// exact tool definition (Key.Hash), to whose calls it covers (Scope) and,
// when ArgsDigest is set, to one exact set of arguments.
type SharedGrant struct {
	ID    string      `json:"id"`
	Key   ApprovalKey `json:"key"`
	Scope GrantScope  `json:"scope"`
	// ArgsDigest is ArgsDigest of the arguments the grant covers; ""
	// covers any arguments.
	ArgsDigest string `json:"args_digest,omitempty"`
	// ArgsPreview shows the covered arguments to a person (never
	// matched against).
	ArgsPreview string    `json:"args_preview,omitempty"`
	GrantedBy   string    `json:"granted_by"`
	GrantedAt   time.Time `json:"granted_at"`
	// RevokedAt is zero while the grant holds.
	RevokedAt time.Time `json:"revoked_at,omitzero"`
	RevokedBy string    `json:"revoked_by,omitempty"`
}

// ErrNotCurrent is wrapped by a Shared store's answer when it cannot
// confirm that what it holds is current (the database is unreachable, or
// was last heard from too long ago). Whoever gets it treats remembered
// approvals as absent and says why.
var ErrNotCurrent = errors.New("the shared store cannot confirm it is current")

// Shared is what a host keeps in a store other processes share: "always"
// grants and session state. internal/store implements it over SQLite and
// Postgres; the host depends on this interface only, so that a library
// user who shares nothing links no database driver.
type Shared interface {
	// Covers reports whether a live grant covers a call of k by w with
	// arguments whose ArgsDigest is argsDigest. It confirms the store's
	// revision first, so that a grant revoked or added anywhere is seen
	// before the decision that would use it. An error (wrapping
	// ErrNotCurrent) means it could not: the caller treats the call as
	// not covered and says why.
	Covers(ctx context.Context, w Who, k ApprovalKey, argsDigest string) (bool, error)
	// AddGrant stores g (its ID and GrantedAt are filled in when empty)
	// and returns it as stored.
	AddGrant(ctx context.Context, g SharedGrant) (SharedGrant, error)
	// LoadSession returns session id's stored state when its revision is
	// newer than since (changed false otherwise); rev is 0 when no state
	// is stored at all (never saved, or swept), so that a process holding
	// a later revision can tell its row is gone and save it whole.
	LoadSession(ctx context.Context, id string, since int64) (st State, rev int64, changed bool, err error)
	// SaveSession merges st into the stored state of st.ID (MergeState:
	// nothing another process added is lost) and returns the merged
	// state and its new revision.
	SaveSession(ctx context.Context, st State) (merged State, rev int64, err error)
}
