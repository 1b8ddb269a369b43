package toolresult

import (
	"fmt"
	"strings"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/session"
)

// Always is where an "always" approval the user adds by hand (`toolwarden
// approvals add`) counts for a host, as a refusal's advice names it: the
// host's shared store when it has one, whose grants are the only
// "always" approvals it reads, else its approvals file.
type Always struct {
	// File is the approvals file (nil: none), when there is no store.
	File *session.Persistent
	// Store is set when the host decides with a shared store.
	Store bool
	// StoreURL names the store with any password hidden ("" unknown).
	StoreURL string
	// Scope is whose calls the grant should cover: what host.Approve
	// would give it for the session.
	Scope session.GrantScope
}

// AlwaysFor is where h keeps "always" approvals of session sessionID's
// calls, with the scope h.Approve would give the grant (a local front
// end, which has no caller, may pass any session id).
func AlwaysFor(h *host.Host, sessionID string) Always {
	if url, scope, ok := h.AlwaysStore(sessionID); ok {
		return Always{Store: true, StoreURL: url, Scope: scope}
	}
	return Always{File: h.Approvals()}
}

// kept reports whether an "always" approval can be kept anywhere.
func (a Always) kept() bool { return a.Store || a.File != nil }

// storeEnv is the environment variable `toolwarden approvals` reads the
// store's URL from when no --store is given.
const storeEnv = "TOOLWARDEN_STORE"

// hiddenPassword is how a store URL shows a password it hides
// (internal/store.Redact, which this package may not import: it would
// link the database drivers into every sdk program).
const hiddenPassword = "xxxxx"

// addCommand writes the `toolwarden approvals add` command, up to the
// tool's flags, that keeps an approval where the host reads it, and
// returns what to say after the whole command. A store URL whose password
// is hidden cannot be pasted as it is: the command reads
// $TOOLWARDEN_STORE instead, and the note says what it must hold.
func (a Always) addCommand(b *strings.Builder) (note string) {
	if !a.Store {
		fmt.Fprintf(b, "toolwarden approvals add --approvals %q", a.File.Path())
		return ""
	}
	b.WriteString("toolwarden approvals add --store ")
	switch {
	case a.StoreURL == "":
		b.WriteString(`"$` + storeEnv + `"`)
		note = fmt.Sprintf(" (with %s set to the shared store's URL)", storeEnv)
	case strings.Contains(a.StoreURL, hiddenPassword):
		b.WriteString(`"$` + storeEnv + `"`)
		note = fmt.Sprintf(" (with %s set to the shared store's URL, %s, its password written out)", storeEnv, a.StoreURL)
	default:
		b.WriteString(shellWord(a.StoreURL))
	}
	fmt.Fprintf(b, " --scope %s", shellWord(scopeFlag(a.Scope)))
	return note
}

// scopeFlag is scope as `approvals add --scope` takes it: KIND:NAME, or
// KIND alone for a scope without a name (team).
func scopeFlag(g session.GrantScope) string {
	if g.Name == "" {
		return g.Kind
	}
	return g.Kind + ":" + g.Name
}

// shellWord is s as one word a POSIX shell reads back unchanged: as it
// is when every byte is safe, else in single quotes.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
