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

	// Per-event state, read by the host functions.
	inEvent  bool
	input    []byte
	cursor   int
	out      []byte
	tooLarge bool
	logs     int
	dropped  int

	// Scratch for building envelopes.
	buf     []byte
	labels  []string
	timeSec int64
	timeBuf []byte

	memo memo

	// retire: the instance works but must not be reused (its deadline
	// fired after it returned, or its memory is near the cap).
	retire bool
	calls  int
}

// callCtx is the context of one event on one instance. It is allocated once
// per instance and re-armed per event, instead of a context.WithTimeout per
// call (which allocates). Its done channel can close only once; a fired
// deadline retires the instance with it.
type callCtx struct {
	in       *instance
	done     chan struct{}
	timer    *time.Timer
	deadline time.Time
	fired    atomic.Bool
}

func (c *callCtx) Deadline() (time.Time, bool) { return c.deadline, true }
func (c *callCtx) Done() <-chan struct{}       { return c.done }
func (c *callCtx) Err() error {
	if c.fired.Load() {
		return context.DeadlineExceeded
	}
	return nil
}
func (c *callCtx) Value(key any) any {
	if key == (stateKey{}) {
		return c.in
	}
	return nil
}

func (c *callCtx) fire() {
	c.fired.Store(true)
	close(c.done)
}

// memAlloc backs one instance's linear memory and caps it: past the limit,
// memory.grow returns -1 (wazero's experimental.MemoryAllocator).
type memAlloc struct {
	limit uint64
	buf   []byte
	hit   bool
}

func (a *memAlloc) Allocate(_, _ uint64) experimental.LinearMemory { return a }

func (a *memAlloc) Reallocate(size uint64) []byte {
	if size > a.limit {
		a.hit = true
		return nil
	}
	if size <= uint64(cap(a.buf)) {
		a.buf = a.buf[:size]
		return a.buf
	}
	c := max(size, min(2*uint64(cap(a.buf)), a.limit))
	nb := make([]byte, size, c)
	copy(nb, a.buf)
	a.buf = nb
	return nb
}

func (a *memAlloc) Free() { a.buf = nil }

// newInstance instantiates the plugin's module: start section, then
// _initialize, under the init deadline.
func (p *Plugin) newInstance(ctx context.Context) (_ *instance, err error) {
	in := &instance{p: p, stack: make([]uint64, 2)}
	in.alloc.limit = p.memLimit
	in.cctx = callCtx{in: in, done: make(chan struct{})}
	in.cctx.timer = time.AfterFunc(time.Hour, in.cctx.fire)
	in.cctx.timer.Stop()

	cfg := wazero.NewModuleConfig().WithName("").WithStartFunctions()
	if p.mod.hasInit {
		cfg = cfg.WithStartFunctions(initExport)
	}
	if p.mod.usesWASI {
		// No FS, args or env (wazero's defaults); fake clocks and a
		// deterministic random source (also defaults); stdout and stderr
		// into the capped log.
		cfg = cfg.WithStdout(&lineWriter{in: in, level: 1}).WithStderr(&lineWriter{in: in, level: 2})
	}
	ictx, cancel := context.WithTimeout(context.WithValue(ctx, stateKey{}, in), p.initTimeout)
	defer cancel()
	ictx = experimental.WithMemoryAllocator(ictx, &in.alloc)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("instantiate: %v", r)
		}
		in.flushLogs()
	}()
	mod, err := p.rt.r.InstantiateModule(ictx, p.mod.compiled, cfg)
	if err != nil {
		return nil, fmt.Errorf("instantiate: %s", in.describeErr(err, ictx.Err() != nil, p.initTimeout))
	}
	in.mod = mod
	in.handle = mod.ExportedFunction(handleExport)
	in.mem = mod.ExportedMemory(memoryExport)
	if in.handle == nil || in.mem == nil {
		_ = mod.Close(ctx)
		return nil, errors.New("instantiate: exports vanished")
	}
	return in, nil
}

func (in *instance) close() {
	in.cctx.timer.Stop()
	if in.mod != nil {
		_ = in.mod.Close(context.Background())
	}
}

// call runs one event. The returned output aliases the instance's buffer and
// is valid until the instance runs again. A non-nil fault means the instance
// must be discarded, except for FaultCanceled before the call and
// FaultInputTooLarge, which leave it untouched (see retire).
func (in *instance) call(ctx context.Context, ev Event, input []byte) ([]byte, uint32, *Fault) {
	p := in.p
	if len(input) > maxInput {
		return nil, 0, p.fault(FaultInputTooLarge, "input exceeds "+strconv.Itoa(maxInput>>10)+" KiB", nil)
	}
	d := p.timeout
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
	in.inEvent = true
	in.stack[0], in.stack[1] = uint64(ev), uint64(len(input))
	in.cctx.deadline = time.Now().Add(d)
	in.cctx.timer.Reset(d)
	err := in.handle.CallWithStack(&in.cctx, in.stack)
	stopped := in.cctx.timer.Stop()
	in.inEvent = false
	in.input = nil
	in.calls++
	if in.logs > 0 {
		in.flushLogs()
	}
	if !stopped {
		// The deadline fired: the module is (or is about to be) closed.
		in.retire = true
	}
	if err != nil {
		in.retire = true
		return nil, 0, in.classify(err, fromParent)
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

// classify turns a call error into a fault. A deadline shows up as an exit
// error (wazero closed the module); anything else is the guest's own fault,
// even when the deadline also passed meanwhile (a recursion without loops is
// not interrupted and ends in a stack overflow).
func (in *instance) classify(err error, fromParent bool) *Fault {
	p := in.p
	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded:
			if fromParent {
				return p.fault(FaultCanceled, "canceled: the caller's deadline passed during the call", err)
			}
			return p.fault(FaultTimeout, "timeout after "+p.timeout.String(), err)
		case sys.ExitCodeContextCanceled:
			return p.fault(FaultCanceled, "canceled during the call", err)
		}
		f := p.fault(FaultExit, "exited with code "+strconv.FormatUint(uint64(exit.ExitCode()), 10), err)
		f.Code = exit.ExitCode()
		return f
	}
	msg := in.describeErr(err, false, 0)
	if in.alloc.hit {
		return p.fault(FaultMemory, "memory limit "+mib(p.memLimit)+" exceeded ("+msg+")", err)
	}
	return p.fault(FaultTrap, msg, err)
}

// describeErr renders a wazero error as one line: "trap: wasm error:
// unreachable" or the host import that trapped.
func (in *instance) describeErr(err error, timedOut bool, limit time.Duration) string {
	if timedOut {
		return "timeout after " + limit.String()
	}
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
	// "module[] function[_initialize] failed: wasm error: ..." from a start
	// function: say which function trapped.
	if strings.HasPrefix(s, "module[") {
		if i := strings.Index(s, "function["); i >= 0 {
			if j := strings.Index(s[i:], "] failed: "); j >= 0 {
				return "trap in " + s[i+len("function["):i+j] + ": " + s[i+j+len("] failed: "):]
			}
		}
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
