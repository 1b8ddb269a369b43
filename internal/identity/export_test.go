package identity

import "time"

// SetRecheck shortens how often t looks at its file, for reload tests.
func SetRecheck(t *Tokens, d time.Duration) {
	t.recheck = d
	t.next.Store(0)
}

// SetRefetch shortens the least time between two key set fetches.
func SetRefetch(o *OIDC, d time.Duration) { o.keys.refetch = d }

// ForgetVerified empties o's cache of verified tokens.
func ForgetVerified(o *OIDC) {
	o.verified.mu.Lock()
	o.verified.entries = nil
	o.verified.mu.Unlock()
}
