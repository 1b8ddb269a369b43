package plugin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/toolwarden/toolwarden/internal/instrument"
	"github.com/toolwarden/toolwarden/internal/session"
)

// instance is one instantiation of a plugin. It runs one event at a time and
// owns every buffer an event needs, so a warm instance makes no host
// allocations per event. After any failure it is discarded, never reused.
type instance struct {
	p      *Plugin
	mod    api.Module
	handle api.Function // cached: ExportedFunction costs µs and allocates
	mem    api.Memory
	stack  []uint64 // reused by CallWithStack
	cctx   callCtx
	alloc  memAlloc

	// The deadline: what stops the guest (guestStop: the instrumented
	// module's stop flag, deadline_flag.go, or the context wazero watches,
	// deadline_wazero.go), set by a timer that is created once and left
	// running across events (deadline.go).
	guestStop
	timer    *time.Timer
	fireDone chan struct{} // the timer's function has set the flag
	fired    atomic.Bool   // fire ran (it runs its body once)
	clock    deadlineClock

	// Per-event state, read by the host functions.
	inEvent  bool
	input    []byte
	cursor   int
	out      []byte
	tooLarge bool
	logs     int
	dropped  int

	rx regexTable // patterns compiled through the regex imports (hostfuncs_regex.go)

	// Scratch for building envelopes.
	buf     []byte
	labels  []string
	timeSec int64
	timeBuf []byte

	memo      memo
	last      lastCheck // a deterministic plugin's last check (deterministic.go)
	defs      defMemo   // rendered definition parts (callblock.go)
	labelMemo labelMemo // the last labels rendered (envelope.go)

	// state, when set, is written into the envelope being built (a
	// stateful plugin's session state, guest_state.go).
	state *session.PluginState

	// retire: the instance works but must not be reused (its deadline
	// fired as it returned, or its memory is near the cap).
	retire bool
	calls  int
}

// callCtx is the context of every guest call on one instance, allocated
// once per instance: the host functions find their instance through it.
// Its Deadline, Done and Err belong to the interrupt strategy
// (deadline_flag.go, deadline_wazero.go).
type callCtx struct{ in *instance }

func (c *callCtx) Value(key any) any {
	if key == (stateKey{}) {
		return c.in
	}
	return nil
}

// memAlloc backs one instance's linear memory and caps it: past the limit,
// memory.grow returns -1 (wazero's experimental.MemoryAllocator).
//
// Where the platform allows (memory_unix.go), the whole limit is reserved
// as address space up front and a grow only makes more of it accessible:
// linear memory never moves, is never copied, and is not on the Go heap.
// Growing by copying into a fresh doubled slice stalled one event of a Go
// guest for 5 ms (40 ms under -race) at its first grow past 4 MiB, and
// put the whole memory through the host's GC. Elsewhere, and when the
// reservation fails, memory grows on the Go heap as a slice.
type memAlloc struct {
	limit uint64
	buf   []byte // the accessible part, len = the guest's memory size
	res   *reservation
	hit   bool
	// state keeps a reservation mapped while guest code runs: wazero frees
	// memory when a module is closed, and Runtime.Close closes modules that
	// may be running an event. Unmapping under them would crash the host,
	// so Free during a call only marks the memory, and leave unmaps it.
	state atomic.Int32
}

const (
	memIdle int32 = iota
	memBusy
	memFreeOnLeave
	memFreed
)

// enter marks guest code running; false if the memory is already freed
// (the instance was closed).
func (a *memAlloc) enter() bool { return a.state.CompareAndSwap(memIdle, memBusy) }

// leave marks guest code stopped, and frees memory that Free left mapped.
func (a *memAlloc) leave() {
	if !a.state.CompareAndSwap(memBusy, memIdle) && a.state.CompareAndSwap(memFreeOnLeave, memFreed) {
		a.release()
	}
}

func (a *memAlloc) Allocate(_, max uint64) experimental.LinearMemory {
	if a.res == nil {
		a.res = reserve(min(a.limit, max))
	}
	return a
}

func (a *memAlloc) Reallocate(size uint64) []byte {
	if size > a.limit {
		a.hit = true
		return nil
	}
	if size <= uint64(cap(a.buf)) {
		a.buf = a.buf[:size]
		return a.buf
	}
	if a.res != nil {
		b, ok := a.res.grow(size)
		if !ok {
			a.hit = true
			return nil
		}
		a.buf = b
		return b
	}
	c := max(size, min(2*uint64(cap(a.buf)), a.limit))
	nb := make([]byte, size, c)
	copy(nb, a.buf)
	a.buf = nb
	return nb
}

func (a *memAlloc) Free() {
	for {
		switch a.state.Load() {
		case memIdle:
			if a.state.CompareAndSwap(memIdle, memFreed) {
				a.release()
				return
			}
		case memBusy:
			if a.state.CompareAndSwap(memBusy, memFreeOnLeave) {
				return
			}
		default:
			return
		}
	}
}

func (a *memAlloc) release() {
	a.buf = nil
	if a.res != nil {
		a.res.release()
		a.res = nil
	}
}

// newInstance instantiates the plugin's module, then runs its start
// function (moved out of the start section by instrument) and _initialize,
// under the init deadline.
func (p *Plugin) newInstance(ctx context.Context) (_ *instance, err error) {
	in := &instance{p: p, stack: make([]uint64, 2), fireDone: make(chan struct{}, 1)}
	in.alloc.limit = p.memLimit
	in.cctx = callCtx{in: in}

	// No start functions: the host runs them itself, below.
	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions()
	if p.mod.usesWASI {
		// No FS, args or env (wazero's defaults); fake clocks and a
		// deterministic random source (also defaults); stdout and stderr
		// into the capped log.
		cfg = cfg.WithStdout(&lineWriter{in: in, level: 1}).WithStderr(&lineWriter{in: in, level: 2})
	}
	ictx, startEnd := in.startCtx(experimental.WithMemoryAllocator(context.WithValue(ctx, stateKey{}, in), &in.alloc))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("instantiate: %v", r)
		}
		in.flushLogs()
		if err != nil && in.mod != nil {
			in.close()
		}
	}()
	mod, err := p.rt.r.InstantiateModule(ictx, p.mod.compiled, cfg)
	if startEnd() && err != nil {
		return nil, errors.New("instantiate: timeout after " + p.initTimeout.String())
	}
	if err != nil {
		return nil, fmt.Errorf("instantiate: %s", in.describeErr(err))
	}
	in.mod = mod
	in.handle = mod.ExportedFunction(handleExport)
	in.mem = mod.ExportedMemory(memoryExport)
	if in.handle == nil || in.mem == nil || !in.bindStop(mod) && !p.rt.opts.noDeadlines {
		return nil, errors.New("instantiate: exports vanished")
	}
	in.timer = time.AfterFunc(time.Hour, in.tick)
	in.timer.Stop()
	for _, name := range [...]string{instrument.StartExport, initExport} {
		fn := mod.ExportedFunction(name)
		if fn == nil {
			continue
		}
		if !in.alloc.enter() {
			return nil, errClosed
		}
		in.arm(p.initTimeout)
		_, err := fn.Call(&in.cctx)
		fired := in.disarm()
		in.alloc.leave()
		if fired {
			return nil, errors.New("instantiate: timeout after " + p.initTimeout.String())
		}
		if err != nil {
			if name == instrument.StartExport {
				name = "the start function"
			}
			return nil, fmt.Errorf("instantiate: %s", in.describeTrap(err, name))
		}
	}
	return in, nil
}

func (in *instance) close() {
	if in.timer != nil {
		in.timer.Stop()
	}
	if in.mod != nil {
		_ = in.mod.Close(context.Background())
	}
}

// call runs one event. The returned output aliases the instance's buffer and
// is valid until the instance runs again. A non-nil fault means the instance
// must be discarded, except for FaultCanceled before the call and
// FaultInputTooLarge, which leave it untouched (see retire).
func (in *instance) call(ctx context.Context, ev Event, input []byte) ([]byte, uint32, *Fault) {
	return in.callWithin(ctx, ev, input, in.p.timeout)
}

// describe runs the describe event under the init deadline: the plugin
// reads its config then (see pool.get).
func (in *instance) describe(ctx context.Context) ([]byte, uint32, *Fault) {
	p := in.p
	in.buf = append(append(in.buf[:0], p.head[EventDescribe]...), p.tail...)
	return in.callWithin(ctx, EventDescribe, in.buf, p.initTimeout)
}

// callWithin is call with a deadline of d instead of the plugin's timeout.
func (in *instance) callWithin(ctx context.Context, ev Event, input []byte, d time.Duration) ([]byte, uint32, *Fault) {
	p := in.p
	if len(input) > inputLimit(ev) {
		return nil, 0, p.fault(FaultInputTooLarge, "input exceeds "+strconv.Itoa(inputLimit(ev)>>10)+" KiB", nil)
	}
	fromParent := false
	if dl, ok := ctx.Deadline(); ok {
		if r := time.Until(dl); r < d {
			d, fromParent = r, true
		}
	}
	if err := ctx.Err(); err != nil || d <= 0 {
		if err == nil {
			err = context.DeadlineExceeded
		}
		return nil, 0, p.fault(FaultCanceled, "canceled before the call: "+err.Error(), err)
	}

	in.input, in.cursor = input, 0
	in.out = in.out[:0]
	in.tooLarge = false
	in.alloc.hit = false // attribute a refused grow to this event only
	if p.pool.isClosed() || !in.alloc.enter() {
		in.retire = true
		return nil, 0, p.fault(FaultClosed, "closed", nil)
	}
	in.inEvent = true
	in.stack[0], in.stack[1] = uint64(ev), uint64(len(input))
	in.arm(d)
	err := in.handle.CallWithStack(&in.cctx, in.stack)
	fired := in.disarm()
	in.alloc.leave()
	in.inEvent = false
	in.input = nil
	in.calls++
	if in.logs > 0 {
		in.flushLogs()
	}
	if fired {
		// The flag stays set: the instance cannot run again.
		in.retire = true
	}
	if err != nil {
		in.retire = true
		if p.pool.isClosed() {
			return nil, 0, p.fault(FaultClosed, "closed during the call", err)
		}
		return nil, 0, in.classify(err, fired, fromParent)
	}
	if in.tooLarge {
		in.retire = true
		return nil, 0, p.fault(FaultOutputTooLarge, "output exceeds "+strconv.Itoa(p.maxOutput>>10)+" KiB", nil)
	}
	if uint64(in.mem.Size()) > p.memLimit/4*3 {
		// Linear memory never shrinks; recycle before the guest hits the cap.
		in.retire = true
	}
	return in.out, uint32(in.stack[0]), nil
}

// classify turns a call error into a fault. A guest that fails while its
// deadline has fired was stopped by the flag (a trap at a check), or failed
// just as the deadline passed: either way, the deadline is the reason.
func (in *instance) classify(err error, fired, fromParent bool) *Fault {
	p := in.p
	if fired {
		if fromParent {
			return p.fault(FaultCanceled, "canceled: the caller's deadline passed during the call", err)
		}
		return p.fault(FaultTimeout, "timeout after "+p.timeout.String(), err)
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		f := p.fault(FaultExit, "exited with code "+strconv.FormatUint(uint64(exit.ExitCode()), 10), err)
		f.Code = exit.ExitCode()
		return f
	}
	msg := in.describeErr(err)
	if in.alloc.hit {
		return p.fault(FaultMemory, "memory limit "+mib(p.memLimit)+" exceeded ("+msg+")", err)
	}
	return p.fault(FaultTrap, msg, err)
}

// describeTrap renders a failure of a start function: "trap in _initialize:
// wasm error: unreachable".
func (in *instance) describeTrap(err error, fn string) string {
	msg := in.describeErr(err)
	if rest, ok := strings.CutPrefix(msg, "trap: "); ok {
		return "trap in " + fn + ": " + rest
	}
	return fn + ": " + msg
}

// describeErr renders a wazero error as one line: "trap: wasm error:
// unreachable" or the host import that trapped.
func (in *instance) describeErr(err error) string {
	var ht *hostTrap
	if errors.As(err, &ht) {
		return "trap: " + ht.msg
	}
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		return "exited with code " + strconv.FormatUint(uint64(exit.ExitCode()), 10)
	}
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if in.alloc.hit {
		return "memory limit " + mib(in.p.memLimit) + " exceeded (" + s + ")"
	}
	if strings.HasPrefix(s, "wasm error:") {
		return "trap: " + s
	}
	return s
}

func mib(n uint64) string {
	if n%(1<<20) == 0 {
		return strconv.FormatUint(n>>20, 10) + " MiB"
	}
	return strconv.FormatUint(n>>10, 10) + " KiB"
}
