package store

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/channel"
)

// Two replicas are two Stores opened on one database, each with its own
// shared Signer under the key every replica derives from the session
// secret.

var testStateKey = channel.SharedStateKey([]byte("a session secret every replica of the test holds"))

func stateBinding() channel.Binding {
	return channel.Binding{
		Session:        "alice/s/tws1.x",
		Server:         "fs",
		Tool:           "write_file",
		DefinitionHash: strings.Repeat("ab", 32),
		Arguments:      json.RawMessage(`{"path":"/tmp/x","content":"hi"}`),
		Scopes:         "path /tmp",
	}
}

// countingStates passes every call to the real store and counts them, so
// a test can tell whether a refusal touched the database.
type countingStates struct {
	*Store
	redeems atomic.Int64
}

func (c *countingStates) RedeemState(ctx context.Context, nonce string, now time.Time) (string, bool, error) {
	c.redeems.Add(1)
	return c.Store.RedeemState(ctx, nonce, now)
}

// replicas opens n Stores on url, each with a shared Signer of ttl.
func replicas(t *testing.T, url string, n int, ttl time.Duration) ([]*channel.Signer, []*countingStates) {
	t.Helper()
	var signers []*channel.Signer
	var stores []*countingStates
	for i := range n {
		st := &countingStates{Store: openTest(t, url, Options{Replica: "replica-" + string(rune('a'+i))})}
		stores = append(stores, st)
		signers = append(signers, channel.NewSharedSigner(testStateKey, ttl, st))
	}
	return signers, stores
}

func rowsOf(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.db.QueryRow("SELECT count(*) FROM tw_request_states").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestARequestStateMintedByOneReplicaIsRedeemedByAnotherOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s, _ := replicas(t, url, 2, time.Minute)
		state, err := s[0].Mint(stateBinding())
		if err != nil {
			t.Fatal(err)
		}
		if err := s[1].Redeem(state, stateBinding()); err != nil {
			t.Fatalf("replica B redeeming A's state: %v", err)
		}
		for i, r := range s {
			if err := r.Redeem(state, stateBinding()); !errors.Is(err, channel.ErrReplayed) {
				t.Fatalf("replica %d redeeming it again: got %v, want ErrReplayed", i, err)
			}
		}
	})
}

func TestConcurrentRedemptionsOfOneStateOnTwoReplicasSucceedExactlyOnce(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s, _ := replicas(t, url, 2, time.Minute)
		const rounds, perReplica = 10, 12
		for round := range rounds {
			state, err := s[round%2].Mint(stateBinding())
			if err != nil {
				t.Fatal(err)
			}
			var ok, replayed atomic.Int64
			var other sync.Map
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range 2 * perReplica {
				wg.Go(func() {
					<-start
					switch err := s[i%2].Redeem(state, stateBinding()); {
					case err == nil:
						ok.Add(1)
					case errors.Is(err, channel.ErrReplayed):
						replayed.Add(1)
					default:
						other.Store(err.Error(), true)
					}
				})
			}
			close(start)
			wg.Wait()
			other.Range(func(k, _ any) bool { t.Errorf("round %d: a redemption failed otherwise: %v", round, k); return true })
			if ok.Load() != 1 || replayed.Load() != 2*perReplica-1 {
				t.Fatalf("round %d: %d redemptions succeeded and %d were refused as replayed; want exactly 1 and %d", round, ok.Load(), replayed.Load(), 2*perReplica-1)
			}
		}
	})
}

func TestAForgedStateIsRefusedWithoutTouchingTheStore(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s, st := replicas(t, url, 2, time.Minute)
		state, err := s[0].Mint(stateBinding())
		if err != nil {
			t.Fatal(err)
		}
		outsider := channel.NewSharedSigner(channel.SharedStateKey([]byte("another team's secret")), time.Minute, st[1])
		foreign, err := outsider.Mint(stateBinding())
		if err != nil {
			t.Fatal(err)
		}
		local, _ := channel.NewSigner(time.Minute, 4).Mint(stateBinding())
		dot := strings.Index(state, ".") + 1
		forged := map[string]string{
			"a state minted under another key":    foreign,
			"a single-process state":              local,
			"the minted MAC altered":              flipAt(state, strings.Index(state[dot:], ".")+dot+2),
			"the nonce altered":                   flipAt(state, dot+4),
			"the expiry pushed out":               flipAt(state, dot+26),
			"a second spelling of the same bytes": state[:len(state)-1] + nonCanonicalLast(state),
			"empty":                               "",
			"three parts missing":                 "tw2.",
		}
		before := st[1].redeems.Load()
		for name, f := range forged {
			if err := s[1].Redeem(f, stateBinding()); !errors.Is(err, channel.ErrForged) {
				t.Errorf("%s: got %v, want ErrForged", name, err)
			}
		}
		if n := st[1].redeems.Load() - before; n != 0 {
			t.Fatalf("forged states touched the store %d times; a forged state must be refused before any write", n)
		}
		// The genuine state was not consumed by the forgeries of it.
		if err := s[1].Redeem(state, stateBinding()); err != nil {
			t.Fatalf("the genuine state after the forgeries: %v", err)
		}
	})
}

func TestAStateRedeemedForAnotherCallIsRefusedSayingWhatChangedAndIsUsedUp(t *testing.T) {
	cases := []struct {
		name   string
		change func(*channel.Binding)
		want   error
	}{
		{"other arguments", func(b *channel.Binding) { b.Arguments = json.RawMessage(`{"path":"/etc/passwd","content":"hi"}`) }, channel.ErrArgumentsChanged},
		{"arguments that are not JSON", func(b *channel.Binding) { b.Arguments = json.RawMessage(`{"path":`) }, channel.ErrArgumentsChanged},
		{"a changed definition", func(b *channel.Binding) { b.DefinitionHash = strings.Repeat("cd", 32) }, channel.ErrDefinitionChanged},
		{"another tool", func(b *channel.Binding) { b.Tool = "delete_file" }, channel.ErrDefinitionChanged},
		{"another session", func(b *channel.Binding) { b.Session = "mallory/s/tws1.y" }, channel.ErrWrongSession},
		{"another scope offered", func(b *channel.Binding) { b.Scopes = "path /" }, channel.ErrScopeChanged},
	}
	forEachEngine(t, func(t *testing.T, url string) {
		s, st := replicas(t, url, 2, time.Minute)
		for _, tc := range cases {
			state, err := s[0].Mint(stateBinding())
			if err != nil {
				t.Fatal(err)
			}
			b := stateBinding()
			tc.change(&b)
			if err := s[1].Redeem(state, b); !errors.Is(err, tc.want) {
				t.Errorf("%s: got %v, want %v", tc.name, err, tc.want)
			}
			// Probing is not free: the state is gone for the right call too.
			if err := s[0].Redeem(state, stateBinding()); !errors.Is(err, channel.ErrReplayed) {
				t.Errorf("%s: the right call after a wrong one: got %v, want ErrReplayed", tc.name, err)
			}
		}
		if n := rowsOf(t, st[0].Store); n != 0 {
			t.Fatalf("%d request states left in the table", n)
		}
	})
}

func TestARowAlteredInTheDatabaseBindsNothing(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s, st := replicas(t, url, 2, time.Minute)
		// A state minted for other arguments; someone with write access
		// to the database copies the parts of the call they want into
		// its row. The parts only explain: the state's MAC still binds.
		wanted := stateBinding()
		wanted.Arguments = json.RawMessage(`{"path":"/etc/shadow","content":"x"}`)
		donor, _ := s[0].Mint(wanted)
		state, _ := s[0].Mint(stateBinding())
		db := st[0].Store
		if _, err := db.db.Exec(db.rebind("UPDATE tw_request_states SET parts = (SELECT parts FROM tw_request_states WHERE nonce = ?) WHERE nonce = ?"), nonceOf(t, donor), nonceOf(t, state)); err != nil {
			t.Fatal(err)
		}
		if err := s[1].Redeem(state, wanted); err == nil {
			t.Fatal("a state was redeemed for arguments it was not minted for, after its row was altered")
		}
	})
}

func TestAnExpiredStateIsRefusedAndItsRowDeleted(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s, st := replicas(t, url, 2, 50*time.Millisecond)
		state, err := s[0].Mint(stateBinding())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(120 * time.Millisecond)
		if err := s[1].Redeem(state, stateBinding()); !errors.Is(err, channel.ErrExpired) {
			t.Fatalf("got %v, want ErrExpired", err)
		}
		if n := rowsOf(t, st[0].Store); n != 0 {
			t.Fatalf("the expired state's row is still there (%d rows)", n)
		}
	})
}

func TestTheSweepDeletesOnlyExpiredStates(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s := openTest(t, url, Options{})
		ctx := context.Background()
		now := time.Now()
		for i, exp := range []time.Time{now.Add(-time.Second), now.Add(-time.Hour), now.Add(time.Hour)} {
			if err := s.MintState(ctx, "nonce-"+string(rune('a'+i)), exp, "p"); err != nil {
				t.Fatal(err)
			}
		}
		s.sweepStates(ctx)
		if n := rowsOf(t, s); n != 1 {
			t.Fatalf("%d rows after the sweep, want the 1 unexpired", n)
		}
		if _, ok, err := s.RedeemState(ctx, "nonce-c", now); !ok || err != nil {
			t.Fatalf("the unexpired state after the sweep: ok %v, err %v", ok, err)
		}
	})
}

func TestAStoreThatCannotAnswerRefusesTheAnswerAndKeepsTheState(t *testing.T) {
	forEachEngine(t, func(t *testing.T, url string) {
		s, st := replicas(t, url, 2, time.Minute)
		state, err := s[0].Mint(stateBinding())
		if err != nil {
			t.Fatal(err)
		}
		// Replica B loses its database.
		if err := st[1].db.Close(); err != nil {
			t.Fatal(err)
		}
		err = s[1].Redeem(state, stateBinding())
		if !errors.Is(err, channel.ErrStateStore) {
			t.Fatalf("got %v, want ErrStateStore (refused: the store could not confirm the state was unused)", err)
		}
		if _, err := s[1].Mint(stateBinding()); err == nil {
			t.Fatal("a replica without its store minted a state it cannot record")
		}
		// Nothing was used up: the retry through A still works.
		if err := s[0].Redeem(state, stateBinding()); err != nil {
			t.Fatalf("the state through the replica that can reach the store: %v", err)
		}
	})
}

// nonceOf is the row key of a shared state: its payload's nonce in hex.
func nonceOf(t *testing.T, state string) string {
	t.Helper()
	p64, _, _ := strings.Cut(strings.TrimPrefix(state, "tw2."), ".")
	p, err := base64.RawURLEncoding.DecodeString(p64)
	if err != nil || len(p) < 17 {
		t.Fatalf("not a shared state: %q", state)
	}
	return hex.EncodeToString(p[1:17])
}

// flipAt changes the base64 character at i to another valid one.
func flipAt(s string, i int) string {
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

// nonCanonicalLast is another character for the last one of s that a
// lenient base64 decoder reads as the same bytes (the unused low bits
// set): a 32-byte MAC in raw base64 leaves 2 bits over.
func nonCanonicalLast(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return string(alphabet[i|1])
}
