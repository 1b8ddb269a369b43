package host

import (
	"sync/atomic"

	"github.com/toolwarden/toolwarden/host/internal/corehome"
)

// useCount counts the calls using a generation without a memory location
// that every call writes: each use adds to one of several stripes, each on
// cache lines of its own, and each core has a stripe of its own, so a
// core's adding and taking back writes a line no other core writes. (A
// stripe picked at random for every use, the earlier design, kept two
// cores from writing one line at the same moment but not from passing
// lines back and forth: half the time, the stripe a core drew was last
// written by the other one: in a profile, acquiring took 1.8 times and
// releasing 3.8 times as long per decision on two cores as on one.)
//
// Each P's stripe number is its home (host/internal/corehome), as each
// P's slot in the plugin pool is. A use keeps the stripe it was added to and is taken
// back there (reload.go, use), even if its goroutine moved to another P
// meanwhile: one lookup per call. Only the sum means anything, and it is
// read only once the generation is retired (see Host.acquire and
// use.release).
type useCount struct {
	// The first stripe's counter stays more than a pair of cache lines
	// from the fields before it, which every call reads.
	_       [128]byte
	stripes [useStripes]useStripe
	homes   corehome.Homes
}

// useStripes is a power of two, at least the cores that decide at once
// on the machines this is made for; past it, two cores may share a
// stripe, which costs speed, never correctness.
const useStripes = 16

// useStripe is one counter and the two cache lines after it (a core's
// prefetcher fetches lines in pairs).
type useStripe struct {
	n atomic.Int64
	_ [128 - 8]byte
}

// stripe returns the calling P's stripe.
func (c *useCount) stripe() *useStripe {
	return &c.stripes[c.homes.Get(useStripes).Load()]
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
