package channel

import (
	"context"
	"sync"
	"testing"
	"time"
)

// countingStates is a StateStore in memory that counts every touch.
type countingStates struct {
	mu      sync.Mutex
	rows    map[string]string
	touched int
}

func (c *countingStates) MintState(_ context.Context, nonce string, _ time.Time, parts string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rows[nonce] = parts
	return nil
}

func (c *countingStates) RedeemState(_ context.Context, nonce string, _ time.Time) (string, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.touched++
	p, ok := c.rows[nonce]
	delete(c.rows, nonce)
	return p, ok, nil
}

// No string a client can send is accepted by a shared Signer for a state
// its key did not mint, and none that fails the mint MAC reaches the
// store (a forgery costs no write and cannot use up a real state); none
// panics.
func FuzzSharedRedeemRefusesWhatItsKeyDidNotMint(f *testing.F) {
	key := SharedStateKey([]byte("a session secret of at least 32 bytes, for the test"))
	minter := NewSharedSigner(key, time.Minute, &countingStates{rows: map[string]string{}})
	valid, err := minter.Mint(binding())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(flipLast(valid))
	f.Add("")
	f.Add("tw2.")
	f.Add("tw2...")
	f.Add("tw1." + valid[4:])
	f.Fuzz(func(t *testing.T, state string) {
		// Another key: what the client holds was minted elsewhere.
		states := &countingStates{rows: map[string]string{}}
		other := NewSharedSigner(SharedStateKey([]byte("another secret, also at least 32 bytes long")), time.Minute, states)
		if err := other.Redeem(state, binding()); err == nil {
			t.Fatalf("a shared signer accepted a state its key never minted: %q", state)
		}
		if states.touched != 0 {
			t.Fatalf("a state that fails the mint MAC reached the store: %q", state)
		}
	})
}
