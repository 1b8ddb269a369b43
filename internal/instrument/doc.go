// Package instrument rewrites a WebAssembly module so that the host can
// stop it at a deadline: the plugin runtime (internal/plugin) passes every module
// through Module before wazero compiles it.
//
// wazero v1.12 interrupts guest code only with WithCloseOnContextDone, which
// costs a watchdog goroutine per call and an exit to Go at every loop
// back-edge (wazero #2466): 4-15x on our plugins. Instead, every module is
// rewritten at load time. Two mutable i32 globals are added after all
// others: the stop flag, exported as __toolwarden_stop, which only the host
// writes, and a countdown, __toolwarden_fuel. Checks are inserted:
//
//   - at the start of every loop body:
//     if (c += w) >= FuelTicks { c = 0; tick }
//     where c is a local added to the function (0 at entry, like every
//     local) and w is 1 + the loop's size in bytes / LoopBytesPerTick (64),
//     so that about 64 KiB of straight-line code at most runs between two
//     ticks of a loop, however big its body;
//   - at the start of every function that calls another guest function:
//     if --fuel <= 0 { tick; fuel = FuelTicks }
//   - after every bulk memory or table instruction, weighted by its size n
//     (saved in a second added local):
//     if (fuel -= 1 + n>>16) <= 0 { tick; fuel = FuelTicks }
//
// and tick is
//
//	memory.grow 0            ;; an exit to Go: a safepoint
//	if stop { unreachable }  ;; the deadline passed: trap
//
// Every unbounded execution iterates a loop without end or makes calls
// without end (recursion, or an exponential call tree), so it passes checks
// without end. When an event's deadline passes, the host sets stop to 1 and
// fuel to 0 from a timer (instance.go): the guest traps at its next
// function entry that checks, or at its loop's next tick (at most FuelTicks
// iterations later). A loop header reads only its local counter: reading
// the flag there, at every iteration, cost the first-party plugins 15-30%
// of their time (docs/performance.md, "Guest cost").
//
// The countdowns exist because the timer needs a goroutine, and Go cannot
// run one while another goroutine, spinning in compiled wasm, holds up a
// stop-the-world (a GC phase, ReadMemStats): native code is never preempted
// (wazero's RATIONALE.md, "Why context cancellation is handled in Go code";
// wazero #1409). So every FuelTicks loop iterations, calls, or 64 KiB of
// bulk memory work, the guest exits to Go, where the scheduler can park it;
// memory.grow 0 is the cheapest exit (the ABI requires a memory; it changes
// nothing). Loops count in a local: a global written in every iteration
// chains each iteration to the previous one's store, which costs Go guests
// most, since their every jump passes their function's loop header
// (docs/performance.md, "Guest cost"). The
// guest's writes to fuel may overwrite
// the host's 0; stop is never written by the guest, so the guest then
// traps at its next loop header or, at the latest, FuelTicks calls later.
//
// A start section is removed and its function exported as
// __toolwarden_start, so that the host runs it under the deadline too (it
// would run inside InstantiateModule, before the host could reach the flag).
//
// Nothing else changes: no index of an existing function, global, type,
// table, label or local moves (added locals come after all others), custom
// sections (names, DWARF) are copied as they are (a function body's code
// offsets move, its instructions do not). Export names starting with
// __toolwarden_ are reserved (pdk/ABI.md section 1).
//
// To find the loops, every instruction is decoded, with its immediates: the
// WebAssembly 2.0 set (MVP, sign extension, saturating truncation, bulk
// memory, reference types, multi-value, fixed-width SIMD), which is what
// wazero enables by default. Anything else (threads, tail calls, exception
// handling, GC, memory64, multi-memory, relaxed SIMD, an unknown opcode) is
// refused with an error that names the opcode and its offset rather than
// guessed at: a wrong guess about an immediate's length would put the
// inserted code inside an instruction.
//
// Every module passes through here before wazero sees it, so the decoder
// also checks every vector length against the bytes left (count): wazero
// v1.12 allocates a vector before it reads the elements, and a 400-byte
// module could make it allocate tens of gigabytes and kill the host.
package instrument
