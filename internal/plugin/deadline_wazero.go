//go:build toolwarden_wazero_interrupt

package plugin

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"
)

// The fallback way to stop guest code at a deadline, built with
// -tags toolwarden_wazero_interrupt: modules are compiled as they are, with
// wazero's WithCloseOnContextDone, and the context of every guest call is
// done once the event's deadline fires. wazero then closes the module at
// its next loop header (the instance is discarded, as after any timeout).
// It is the known-good path should a wazero upgrade break what
// internal/instrument relies on; it costs more per event (docs/plugins.md).
//
// wazero checks only at loop headers, so a guest that never loops but
// calls without end (an exponential call tree, whose stack stays shallow)
// would run on: a function listener on every guest function looks at the
// deadline at each call and exits as wazero would.

// interruptStrategy names this file's way of stopping guests (docs, tests).
const interruptStrategy = "wazero"

// guestCallAllocs is what stopping guests allocates per guest call: wazero's watchdog goroutine for the call context, started by every call.
const guestCallAllocs = 3

// guestStop is closed when the deadline fires: it is the Done channel of
// the instance's call context, which wazero watches during every call.
type guestStop struct{ done chan struct{} }

// configureInterrupt makes wazero insert its checks and watch each call's
// context (not for benchmarks without deadlines).
func configureInterrupt(cfg wazero.RuntimeConfig, opts Options) wazero.RuntimeConfig {
	return cfg.WithCloseOnContextDone(!opts.noDeadlines)
}

// forCompile compiles bin as it is, with the call listener (see above).
// wazero's cache keys on the listener and the context watch, so the disk
// cache never hands this build code compiled by the other.
func (rt *Runtime) forCompile(ctx context.Context, bin []byte, _ [sha256.Size]byte) (context.Context, []byte, error) {
	if rt.opts.noDeadlines {
		return ctx, bin, nil
	}
	return experimental.WithFunctionListenerFactory(ctx, callCheck{}), bin, nil
}

// forInspect is what Inspect compiles: what Load compiles.
func forInspect(bin []byte) ([]byte, error) { return bin, nil }

// bindStop readies a fresh instance's done channel; false without
// deadlines.
func (in *instance) bindStop(api.Module) bool {
	if in.p.rt.opts.noDeadlines {
		return false
	}
	in.done = make(chan struct{})
	return true
}

func (in *instance) canStop() bool { return in.done != nil }

// stopGuest runs once, on the timer's goroutine: closing done makes wazero
// close the module, and the call listener exit.
func (in *instance) stopGuest() { close(in.done) }

// stopped reports whether stopGuest ran (tests).
func (in *instance) stopped() bool {
	if in.done == nil {
		return false
	}
	select {
	case <-in.done:
		return true
	default:
		return false
	}
}

// startCtx bounds InstantiateModule by the init deadline: wazero runs the
// module's start section inside it (the instrumented build moves it out,
// to an export newInstance calls under the deadline). Only the init
// deadline bounds it, as in the instrumented build, not the caller's ctx.
func (in *instance) startCtx(ctx context.Context) (context.Context, func() (timedOut bool)) {
	if in.p.rt.opts.noDeadlines {
		return ctx, func() bool { return false }
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), in.p.initTimeout)
	return sctx, func() bool {
		timedOut := sctx.Err() != nil
		cancel()
		return timedOut
	}
}

// The context of a guest call is done once the instance's deadline fired
// (an event's or an interrupt's). Deadline reports none: the timer, not
// the context, keeps the time, so wazero needs no timer of its own.
func (c *callCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

func (c *callCtx) Done() <-chan struct{} { return c.in.done }

func (c *callCtx) Err() error {
	if c.in.stopped() {
		return context.DeadlineExceeded
	}
	return nil
}

// callCheck is the function listener that stops call trees: at every
// guest function's entry it looks at the call's context and, once done,
// exits the way wazero does when it closes a module for a context.
type callCheck struct{}

func (callCheck) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	if def.GoFunction() != nil {
		return nil // a host function: its caller was checked
	}
	return callCheck{}
}

func (callCheck) Before(ctx context.Context, _ api.Module, _ api.FunctionDefinition, _ []uint64, _ experimental.StackIterator) {
	if ctx.Err() != nil {
		panic(sys.NewExitError(sys.ExitCodeDeadlineExceeded))
	}
}

func (callCheck) After(context.Context, api.Module, api.FunctionDefinition, []uint64) {}

func (callCheck) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}
