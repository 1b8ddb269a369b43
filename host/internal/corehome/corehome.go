// Package corehome gives each core (Go's P) a number of its own, its home,
// for per-core slots and counters that two cores never write at once.
//
// Go does not tell a goroutine which P it runs on, but sync.Pool keeps one
// object per P and hands it back on the same P without a shared write: a
// Homes holds each P's Home that way. A P that has none (its first use, or
// the collector dropped it after two collections without one) draws the
// next number in turn, which may be another P's; a user that can tell
// (the plugin pool, finding its home slot empty) moves the home with
// Store. Under the race detector sync.Pool drops objects at random, so a
// P's home wanders: users stay correct, only the affinity is lost.
package corehome

import (
	"sync"
	"sync/atomic"
)

// Homes hands each P its Home. The zero Homes is ready to use, and must
// not be copied after.
type Homes struct {
	homes sync.Pool // *Home, one per P
	next  atomic.Uint32
}

// Home is one P's number.
type Home struct{ n atomic.Int32 }

// Get returns the calling P's home, drawing the next of 0..n-1 in turn
// when the P has none.
func (hs *Homes) Get(n int) *Home {
	h, _ := hs.homes.Get().(*Home)
	if h == nil {
		h = new(Home)
		h.n.Store(int32((hs.next.Add(1) - 1) % uint32(n)))
	}
	hs.homes.Put(h)
	return h
}

// Load returns the home's number.
func (h *Home) Load() int { return int(h.n.Load()) }

// Store moves the home to number i.
func (h *Home) Store(i int) { h.n.Store(int32(i)) }
