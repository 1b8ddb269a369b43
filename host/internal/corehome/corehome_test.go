package corehome

import "testing"

// Homes are drawn in turn, each within 0..n-1, and a home stays where
// Store moved it.
func TestHomesAreDrawnInTurnAndMoveWhenStored(t *testing.T) {
	var hs Homes
	for i, want := range []int{0, 1, 2, 0, 1} {
		h := hs.Get(3)
		if h.Load() != want {
			t.Fatalf("draw %d: home %d, want %d", i, h.Load(), want)
		}
		// Take this P's home out of the pool, so that the next Get draws.
		for hs.homes.Get() != nil {
		}
	}
	h := hs.Get(3)
	h.Store(2)
	if h.Load() != 2 {
		t.Fatalf("stored 2, loaded %d", h.Load())
	}
}
