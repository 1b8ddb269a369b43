package plugin

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
)

// heldInstance is an idle instance of the noop plugin, taken from its pool.
func heldInstance(t *testing.T) *instance {
	t.Helper()
	rt := newRuntime(t, Options{})
	p, err := loadWasm(t, rt, config.Policy{Name: "noop"}, filepath.Join("testdata", "wat", "noop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	in := p.pool.take()
	t.Cleanup(func() { p.pool.give(in) })
	if !in.canStop() {
		t.Fatal("the instance cannot be stopped")
	}
	return in
}

// The timer stays scheduled across events, so an event with a shorter
// deadline than the one the timer waits for must pull it forward: an
// event after a long init must not wait for the init's deadline.
func TestAShorterDeadlineMovesTheTimerForward(t *testing.T) {
	in := heldInstance(t)
	c := &in.clock
	in.arm(time.Hour)
	if in.disarm() {
		t.Fatal("fired")
	}
	before := nowNanos()
	in.arm(50 * time.Millisecond)
	defer in.disarm()
	if at := c.at.Load(); at == 0 || at > before+int64(time.Second) {
		t.Fatalf("timer at %v from now (0: not scheduled), want within the event's 50ms", time.Duration(at-before))
	}
}

// The timer fires the running event's deadline and no other: not an idle
// instance, not an event whose deadline is later than the one the timer
// was scheduled for.
func TestTheTimerFiresOnlyThePassedDeadlineOfTheRunningEvent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(in *instance)
		fires bool
	}{
		{"an idle instance is left alone", func(in *instance) {}, false},
		{"an event whose deadline is ahead is left alone", func(in *instance) { in.clock.due.Store(nowNanos() + int64(time.Hour)) }, false},
		{"an event whose deadline passed is stopped", func(in *instance) { in.clock.due.Store(1) }, true},
		{"an interrupt stops an idle instance", func(in *instance) { in.clock.kill.Store(true) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := heldInstance(t)
			tc.setup(in)
			in.tick() // what the timer runs when it goes off
			if got := in.fired.Load(); got != tc.fires {
				t.Fatalf("fired %v, want %v", got, tc.fires)
			}
			if tc.fires {
				if !in.stopped() {
					t.Fatalf("fired but the guest is not told to stop (%s)", interruptStrategy)
				}
				if !in.disarm() {
					t.Fatal("disarm did not report the firing")
				}
				in.retire = true
			} else if in.disarm() {
				t.Fatal("disarm reported a firing that did not happen")
			}
		})
	}
}

// After many events, a spinning event is still stopped at its deadline
// (the timer lapsed or waits for an earlier event's deadline).
func TestASpinAfterManyEventsTimesOut(t *testing.T) {
	rt := newRuntime(t, Options{})
	// 200ms, not less: a Go guest's ordinary event under -race with the
	// wazero build (a call out to Go at every call and loop) can take 20ms.
	p, err := FromBytes(context.Background(), rt, &config.Policy{Name: "spin", TimeoutMs: 200}, buildGuest(t, "./testdata/gospin"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ctx := context.Background()
	for i := range 200 {
		if v := p.Check(ctx, checkInput(`{}`)); v.Err != nil {
			t.Fatalf("event %d: %v", i, v.Err)
		}
	}
	v := p.Check(ctx, checkInput(`{"x":"BOOM"}`))
	if f, ok := v.Err.(*Fault); !ok || f.Kind != FaultTimeout {
		t.Fatalf("spin: %v, want a timeout", v.Err)
	}
}
