//go:build !toolwarden_wazero_interrupt

package plugin

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/toolwarden/toolwarden/internal/instrument"
)

// The default way to stop guest code at a deadline: every module is
// instrumented at load (internal/instrument) with an exported stop flag and
// a countdown, which the deadline timer sets (deadline.go). The build tag
// toolwarden_wazero_interrupt swaps this file for deadline_wazero.go, which
// leaves modules as they are and lets wazero interrupt them; nothing else
// in the package knows which of the two it runs with.

// interruptStrategy names this file's way of stopping guests (docs, tests).
const interruptStrategy = "instrument"

// guestCallAllocs is what stopping guests allocates per guest call: none: the timer is per instance and the checks are in the guest.
const guestCallAllocs = 0

// guestStop is what the deadline timer writes to stop the guest: the
// globals the instrumented module checks at every loop header and at the
// entry of functions that call (nil without deadlines).
type guestStop struct {
	stop api.MutableGlobal
	fuel api.MutableGlobal
}

// configureInterrupt adds what the strategy needs to the runtime's config:
// nothing, the checks are in the guest's code.
func configureInterrupt(cfg wazero.RuntimeConfig, _ Options) wazero.RuntimeConfig { return cfg }

// forCompile returns the bytes to compile for bin and the context to
// compile them under: the instrumented module (instrcache.go), or bin as
// it is without deadlines (benchmarks).
func (rt *Runtime) forCompile(ctx context.Context, bin []byte, sum [sha256.Size]byte) (context.Context, []byte, error) {
	ibin, err := rt.instrumented(bin, sum)
	if err != nil {
		return nil, nil, err
	}
	if rt.opts.noDeadlines {
		ibin = bin
	}
	return ctx, ibin, nil
}

// forInspect is what Inspect compiles: what Load compiles.
func forInspect(bin []byte) ([]byte, error) { return instrument.Module(bin) }

// bindStop finds the stop flag in a fresh instance; false if the module
// has none (it was compiled without deadlines).
func (in *instance) bindStop(mod api.Module) bool {
	in.stop, _ = mod.ExportedGlobal(instrument.StopExport).(api.MutableGlobal)
	in.fuel, _ = mod.ExportedGlobal(instrument.FuelExport).(api.MutableGlobal)
	return in.stop != nil && in.fuel != nil
}

// canStop reports whether the deadline timer can stop this instance.
func (in *instance) canStop() bool { return in.stop != nil }

// stopGuest runs once, on the timer's goroutine: the flag, and the
// countdown to 0 so that the guest looks at the flag at its next check.
func (in *instance) stopGuest() {
	in.stop.Set(1)
	in.fuel.Set(0)
}

// stopped reports whether stopGuest ran (tests).
func (in *instance) stopped() bool { return in.stop != nil && in.stop.Get() == 1 }

// startCtx is the context InstantiateModule runs under. The instrumented
// module has no start section left (instrument moves it to an export that
// newInstance calls under the init deadline), so it is ctx, and the start
// never times out here.
func (in *instance) startCtx(ctx context.Context) (context.Context, func() (timedOut bool)) {
	return ctx, func() bool { return false }
}

// The context of every guest call is never done: deadlines are the stop
// flag's business, and a done channel would make wazero watch it.
func (c *callCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *callCtx) Done() <-chan struct{}       { return nil }
func (c *callCtx) Err() error                  { return nil }
