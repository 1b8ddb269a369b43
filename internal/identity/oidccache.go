package identity

import (
	"crypto/sha256"
	"slices"
	"sync"
	"time"
)

// A JWT's signature check costs a few hundred microseconds, and an agent
// sends the same access token with every call for as long as it lives. So
// a token that passed every check is remembered by its hash until its exp,
// but for at most verifiedTTL: a key the issuer retires stops working
// within that time, as it would once serve refetched the key set. Refused
// tokens are never remembered.
const (
	verifiedTTL = time.Minute
	// verifiedMax bounds the cache; when full it starts again empty,
	// which costs one re-verification per live token.
	verifiedMax = 10000
)

type verifiedCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]verifiedEntry
}

type verifiedEntry struct {
	p     Principal
	until time.Time
}

func (c *verifiedCache) get(key [sha256.Size]byte, now time.Time) (Principal, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !now.Before(e.until) {
		return Principal{}, false
	}
	// Each caller gets its own groups, so none can change another's.
	p := e.p
	p.Groups = slices.Clone(p.Groups)
	return p, true
}

func (c *verifiedCache) put(key [sha256.Size]byte, p Principal, exp, now time.Time) {
	until := now.Add(verifiedTTL)
	if exp.Before(until) {
		until = exp
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= verifiedMax {
		c.entries = make(map[[sha256.Size]byte]verifiedEntry)
	}
	p.Groups = slices.Clone(p.Groups)
	c.entries[key] = verifiedEntry{p: p, until: until}
}
