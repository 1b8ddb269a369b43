package host

import (
	"math/rand/v2"
	"sync/atomic"
)

// useCount counts the calls using a generation without a memory location
// that every call writes: each use adds to one of several stripes, each on
// cache lines of its own, so two cores deciding at once seldom write the
// same line (one shared counter moved its line from core to core twice
// per decision). The stripe is picked at random from the calling thread's
// own generator (math/rand/v2's top-level functions keep one per thread),
// so picking shares nothing either. A use may end on another stripe than
// it began on: only the sum means anything, and it is read only once the
// generation is retired (see generation.acquire and release).
type useCount struct {
	stripes [useStripes]useStripe
}

// useStripes is a power of two; with two cores deciding, two uses land on
// one stripe about one time in useStripes.
const useStripes = 16

// useStripe is one counter alone on two cache lines (a core's prefetcher
// fetches lines in pairs).
type useStripe struct {
	n atomic.Int64
	_ [128 - 8]byte
}

// stripe returns a stripe to add a use to.
func (c *useCount) stripe() *useStripe {
	return &c.stripes[rand.Uint32()&(useStripes-1)]
}

// sum adds the stripes up, one at a time. It is not a snapshot: see
// generation.release for why it is enough.
func (c *useCount) sum() int64 {
	var n int64
	for i := range c.stripes {
		n += c.stripes[i].n.Load()
	}
	return n
}
