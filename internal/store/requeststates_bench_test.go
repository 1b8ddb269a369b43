package store

import (
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/channel"
)

// BenchmarkSharedRequestState is one ask's request state through the
// store (Mint: an INSERT; Redeem: the DELETE ... RETURNING), against the
// single-process Signer in the same run.
func BenchmarkSharedRequestState(b *testing.B) {
	b.Run("in-process", func(b *testing.B) {
		s := channel.NewSigner(time.Minute, 4096)
		benchMintRedeem(b, s)
	})
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			st := openTest(b, benchURL(b, e), Options{})
			benchMintRedeem(b, channel.NewSharedSigner(testStateKey, time.Minute, st))
		})
	}
}

func benchMintRedeem(b *testing.B, s *channel.Signer) {
	bd := stateBinding()
	for b.Loop() {
		state, err := s.Mint(bd)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Redeem(state, bd); err != nil {
			b.Fatal(err)
		}
	}
}
