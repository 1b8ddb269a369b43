package plugin

import (
	"context"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// oneCore runs the rest of the test on one P, so that calls made one
// after another take back the one idle instance.
func oneCore(t *testing.T) {
	prev := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(prev) })
}

// The guest counts the checks it ran (its reason), so the counts show
// which checks entered it: an input repeated by the next check is answered
// from the instance's last check, and one that differs in a label (a
// taint), an argument or the session's input in between always enters the
// guest, however sessions interleave.
func TestReuseNeverOutlivesANewInputAcrossSessions(t *testing.T) {
	oneCore(t)
	rt := newRuntime(t, Options{PoolSize: 2})
	bin := buildGuest(t, "./testdata/godeterministic")
	ctx := context.Background()
	p, err := FromBytes(ctx, rt, &config.Policy{Name: "det", Config: map[string]any{"deterministic": true}}, bin)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	in := func(session, args string, labels ...string) *policy.CheckInput {
		c := checkInput(args, labels...)
		c.Session = session
		return c
	}
	for i, tc := range []struct {
		c    *policy.CheckInput
		want string
	}{
		{in("a", `{"path":"/a"}`), "1"},
		{in("a", `{"path":"/a"}`), "1"},
		{in("b", `{"path":"/a"}`), "1"}, // another session, the same input
		{in("b", `{"path":"/b"}`), "2"},
		{in("a", `{"path":"/a"}`), "3"},              // b's input came between
		{in("a", `{"path":"/a"}`, "untrusted"), "4"}, // a taint is a new input
		{in("b", `{"path":"/a"}`, "untrusted"), "4"},
		{in("b", `{"path":"/a"}`), "5"}, // the label gone is new again
		{in("a", `{"path":"/c"}`), "6"},
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
					c.Labels = []string{labelUntrusted, labelPrivate}
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
	if n := len(p.pool.places); n < 1 || n > 2 {
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
			for range 300 {
				in, err := p.pool.get(context.Background())
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
	live, nlive := len(p.pool.live), len(p.pool.places)
	p.pool.mu.Unlock()
	if n := len(p.pool.idle); n != 0 {
		t.Errorf("%d idle instances after Close", n)
	}
	if live != 0 || nlive != 0 {
		t.Errorf("after Close: %d live instances (count %d)", live, nlive)
	}
	if _, err := p.pool.get(context.Background()); err == nil {
		t.Error("a closed pool handed out an instance")
	}
}

// A caller waiting for an instance (the pool at its size) gets the one
// returned, and, when the held one retires instead, a fresh one
// in its place: no put or discard is missed by a waiter.
func TestAWaiterWakesForAReturnedOrRetiredInstance(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 1})
	p, err := loadWasm(t, rt, config.Policy{Name: "noop"}, filepath.Join("testdata", "wat", "noop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	for _, retire := range []bool{false, true} {
		held := p.pool.take()
		got := make(chan *instance)
		go func() {
			in, err := p.pool.get(context.Background())
			if err != nil {
				t.Error(err)
			}
			got <- in
		}()
		for p.pool.waiting.Load() == 0 {
			runtime.Gosched() // until the caller waits
		}
		held.retire = retire
		p.pool.put(held)
		in := <-got
		if retire == (in == held) {
			t.Fatalf("retire %v: the waiter got the held instance: %v", retire, in == held)
		}
		p.pool.put(in)
	}
}
