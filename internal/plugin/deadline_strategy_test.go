package plugin

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/instrument"
)

// A start section that never ends is guest code run at instantiation,
// before any event: the init deadline stops it in both builds (the
// instrumented build calls it as an export under the stop flag; the
// wazero build runs InstantiateModule under a context that wazero
// watches), and the load fails as a timeout instead of hanging the host.
func TestAStartSectionThatNeverEndsFailsTheLoadWithATimeout(t *testing.T) {
	rt := newRuntime(t, Options{InitTimeout: 100 * time.Millisecond})
	type result struct {
		p   *Plugin
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		p, err := loadWasm(t, rt, config.Policy{Name: "hostile-startloop"}, filepath.Join("testdata", "hostile", "startloop.wasm"))
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		var f *Fault
		if !errors.As(r.err, &f) || f.Kind != FaultLoad || !strings.Contains(r.err.Error(), "instantiate: timeout after 100ms") {
			t.Fatalf("%s build: load error %v, want a load fault with %q", interruptStrategy, r.err, "instantiate: timeout after 100ms")
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s build: the load took %v", interruptStrategy, d)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s build: the load still runs after 20s: the start section was never stopped", interruptStrategy)
	}
}

// Each build stops guests its own way, and only that way: the default
// instruments every module (the stop flag is exported), the
// toolwarden_wazero_interrupt build compiles modules as they are and hands
// wazero a call context it can watch.
func TestEachBuildStopsGuestsItsOwnWay(t *testing.T) {
	in := heldInstance(t)
	flag := in.mod.ExportedGlobal(instrument.StopExport) != nil
	watched := in.cctx.Done() != nil
	switch interruptStrategy {
	case "instrument":
		if !flag || watched {
			t.Fatalf("instrumented build: stop flag exported %v, call context watched %v", flag, watched)
		}
	case "wazero":
		if flag || !watched {
			t.Fatalf("wazero build: stop flag exported %v (want an uninstrumented module), call context watched %v", flag, watched)
		}
	default:
		t.Fatalf("unknown strategy %q", interruptStrategy)
	}
	if in.stopped() || in.cctx.Err() != nil {
		t.Fatal("an idle instance is already stopped")
	}
	in.interrupt()
	deadline := time.Now().Add(5 * time.Second)
	for !in.fired.Load() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	// disarm waits for the timer's function to finish: only then may this
	// goroutine look at what it wrote.
	if !in.fired.Load() || !in.disarm() || !in.stopped() {
		t.Fatal("interrupt did not stop the instance within 5s")
	}
	in.retire = true
}
