package plugin

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/host/policy"
	"github.com/toolwarden/toolwarden/plugins/trifecta"
)

// twoHomes returns two session keys whose home slots differ.
func twoHomes(t *testing.T, pl *pool) (string, string) {
	t.Helper()
	a := "session-a"
	for i := range 1000 {
		b := "session-b" + strconv.Itoa(i)
		if pl.slotFor(b) != pl.slotFor(a) {
			return a, b
		}
	}
	t.Fatal("no two keys with different slots")
	return "", ""
}

// A session takes back the instance it used last, however the events of
// two sessions interleave: each keeps its own warm instance (and its
// deterministic last check) instead of taking whichever came back last.
func TestASessionTakesBackTheInstanceItUsedLast(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 2})
	p, err := loadWasm(t, rt, config.Policy{Name: "noop"}, filepath.Join("testdata", "wat", "noop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ctx := context.Background()
	a, b := twoHomes(t, p.pool)
	x, err := p.pool.get(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := p.pool.get(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if x == y {
		t.Fatal("two holders share an instance")
	}
	p.pool.put(x)
	p.pool.put(y)
	for i := range 10 {
		first, second, want := a, b, [2]*instance{x, y}
		if i%2 == 1 {
			first, second, want = b, a, [2]*instance{y, x}
		}
		got0, _ := p.pool.get(ctx, first)
		got1, _ := p.pool.get(ctx, second)
		if got0 != want[0] || got1 != want[1] {
			t.Fatalf("round %d: the sessions swapped instances", i)
		}
		p.pool.put(got1)
		p.pool.put(got0)
	}
}

// The guest counts the checks it ran (its reason), so the counts show
// which checks entered it: a session that repeats its input is answered
// from its own instance's last check even while another session, with
// another input, decides in between; an input that differs in a label
// (a taint) or an argument always enters the guest, whichever instance
// answers and however the sessions interleave.
func TestReuseFollowsTheSessionAndNeverOutlivesANewInput(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 2})
	bin := buildGuest(t, "./testdata/godeterministic")
	ctx := context.Background()
	p, err := FromBytes(ctx, rt, &config.Policy{Name: "det", Config: map[string]any{"deterministic": true}}, bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	a, b := twoHomes(t, p.pool)
	in := func(session, args string, labels ...string) *policy.CheckInput {
		c := checkInput(args, labels...)
		c.Session = session
		return c
	}
	// Each session gets its own instance at its first check (both held at
	// once), so the counts are per session.
	x, _ := p.pool.get(ctx, a)
	y, _ := p.pool.get(ctx, b)
	p.pool.put(x)
	p.pool.put(y)
	for i, tc := range []struct {
		c    *policy.CheckInput
		want string
	}{
		{in(a, `{"path":"/a"}`), "1"},
		{in(b, `{"path":"/b"}`), "1"},
		{in(a, `{"path":"/a"}`), "1"}, // reused: b's check went to its own instance
		{in(b, `{"path":"/b"}`), "1"},
		{in(a, `{"path":"/a"}`, "untrusted"), "2"}, // a taint is a new input
		{in(a, `{"path":"/a"}`, "untrusted"), "2"},
		{in(b, `{"path":"/a"}`, "untrusted"), "2"}, // a's input on b's instance: new there
		{in(a, `{"path":"/a"}`), "3"},              // the label gone is new again
		{in(a, `{"path":"/c"}`), "4"},
	} {
		v := p.Check(ctx, tc.c)
		if v.Err != nil {
			t.Fatal(v.Err)
		}
		if v.Reason != tc.want {
			t.Fatalf("check %d (%s): guest count %q, want %q", i, tc.c.Session, v.Reason, tc.want)
		}
	}
}

// Many sessions decide at once through a real trifecta, clean and tainted
// in turn, with fewer instances than sessions: every verdict is the one
// its own labels call for (a verdict reused from another session's
// instance would be wrong), and the pool never holds more instances than
// its size.
func TestConcurrentSessionsNeverGetAnotherSessionsVerdict(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 2})
	p := loadBuiltin(t, rt, "trifecta", nil)
	t.Cleanup(p.Close)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 200 {
				c := checkInput(`{"path":"/tmp/x"}`)
				c.Session = "s" + strconv.Itoa(g)
				c.Caps.ReadsPrivateData, c.Caps.SeesUntrustedContent = true, true
				want := policy.Allow
				if (g+i)%3 == 0 {
					c.Labels = []string{trifecta.LabelUntrusted, trifecta.LabelPrivate}
					want = policy.Ask
				}
				if v := p.Check(context.Background(), c); v.Err != nil || (v.Verdict == policy.Ask) != (want == policy.Ask) {
					t.Errorf("session %d check %d: %s %v, want %s", g, i, v.Verdict, v.Err, want)
					return
				}
			}
		})
	}
	wg.Wait()
	p.pool.mu.Lock()
	n := p.pool.nlive
	p.pool.mu.Unlock()
	if n < 1 || n > 2 {
		t.Errorf("%d instances, pool size 2", n)
	}
}

// Holders racing on a small pool never share an instance, waiters wake
// when an instance comes back, and Close leaves no idle instance behind,
// whether it comes before or after the holders return theirs.
func TestPoolSlotsUnderRaces(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 2})
	p, err := loadWasm(t, rt, config.Policy{Name: "noop"}, filepath.Join("testdata", "wat", "noop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	var held sync.Map // *instance -> holder
	var gets atomic.Int64
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			key := "s" + strconv.Itoa(g%3)
			if g%3 == 2 {
				key = "" // an event without a session
			}
			for range 300 {
				in, err := p.pool.get(context.Background(), key)
				if err != nil {
					return // closed
				}
				if other, loaded := held.LoadOrStore(in, g); loaded {
					t.Errorf("holder %d got the instance holder %v holds", g, other)
				}
				gets.Add(1)
				held.Delete(in)
				p.pool.put(in)
			}
		})
	}
	wg.Wait()
	if gets.Load() != 6*300 {
		t.Fatalf("%d gets, want %d", gets.Load(), 6*300)
	}
	kept := p.pool.take()
	p.Close()
	p.pool.put(kept) // after Close: discarded
	p.pool.mu.Lock()
	live, nlive := len(p.pool.live), p.pool.nlive
	p.pool.mu.Unlock()
	for i := range p.pool.slots {
		if p.pool.slots[i].in.Load() != nil {
			t.Errorf("slot %d holds an instance after Close", i)
		}
	}
	if live != 0 || nlive != 0 {
		t.Errorf("after Close: %d live instances (count %d)", live, nlive)
	}
	if _, err := p.pool.get(context.Background(), "s0"); err == nil {
		t.Error("a closed pool handed out an instance")
	}
}
