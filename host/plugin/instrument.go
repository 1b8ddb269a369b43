package plugin

import (
	"errors"
	"strconv"
)

// Deadline instrumentation.
//
// wazero v1.12 interrupts guest code only with WithCloseOnContextDone, which
// costs a watchdog goroutine per call and an exit to Go at every loop
// back-edge (wazero #2466): 4-15x on our plugins. Instead, every module is
// rewritten at load time. Two mutable i32 globals are added after all
// others: the stop flag, exported as __toolwarden_stop, and a countdown,
// __toolwarden_fuel. A check is inserted
//
//   - at the start of every loop body,
//   - at the start of every function that calls another guest function
//     (unless its body starts with a loop, whose check comes first), and
//   - after every bulk memory or table instruction, weighted (it counts as
//     bulkWeight checks: one such instruction can take milliseconds).
//
// Every unbounded execution iterates a loop without end or makes calls
// without end (recursion, or an exponential call tree), so it passes checks
// without end. A check is
//
//	fuel -= weight
//	if fuel <= 0 {
//		memory.grow 0            ;; an exit to Go: a safepoint
//		if stop { unreachable }  ;; the deadline passed: trap
//		fuel = fuelTicks
//	}
//
// When an event's deadline passes, the host sets stop to 1 and fuel to 0
// from a timer (instance.go), so the guest traps at its next check. The
// countdown exists because the timer needs a goroutine, and Go cannot run
// one while another goroutine, spinning in compiled wasm, holds up a
// stop-the-world (a GC phase, ReadMemStats): native code is never preempted
// (wazero's RATIONALE.md, "Why context cancellation is handled in Go code";
// wazero #1409). So every fuelTicks checks the guest exits to Go, where the
// scheduler can park it; memory.grow 0 is the cheapest exit (the ABI
// requires a memory; it changes nothing). The guest's own writes to fuel
// may overwrite the host's 0; the guest then traps at the latest fuelTicks
// checks later, since stop is never written by the guest.
//
// A start section is removed and its function exported as
// __toolwarden_start, so that the host runs it under the deadline too (it
// would run inside InstantiateModule, before the host could reach the flag).
//
// Nothing else changes: no index of an existing function, global, local,
// type, table or label moves, custom sections (names, DWARF) are copied as
// they are (a function body's code offsets move, its instructions do not).
// Export names starting with __toolwarden_ are reserved (pdk/ABI.md section
// 1).
//
// To find the loops, every instruction is decoded, with its immediates: the
// WebAssembly 2.0 set (MVP, sign extension, saturating truncation, bulk
// memory, reference types, multi-value, fixed-width SIMD), which is what
// wazero enables by default. Anything else (threads, tail calls, exception
// handling, GC, memory64, multi-memory, relaxed SIMD, an unknown opcode) is
// refused with an error that names the opcode and its offset rather than
// guessed at: a wrong guess about an immediate's length would put the
// inserted code inside an instruction.

const (
	// reservedPrefix starts every export name the host adds.
	reservedPrefix = "__toolwarden_"
	// stopExport is the stop flag: a mutable i32 global.
	stopExport = "__toolwarden_stop"
	// fuelExport is the countdown to the next exit to Go.
	fuelExport = "__toolwarden_fuel"
	// startExport is the module's start function, when it has one.
	startExport = "__toolwarden_start"
)

// instrumentError is a reason instrument refused a module.
type instrumentError struct{ msg string }

func (e *instrumentError) Error() string { return e.msg }

// fail aborts decoding; instrument recovers it (and only it) into an error.
func fail(off int, msg string) {
	panic(&instrumentError{msg: msg + " at offset 0x" + strconv.FormatInt(int64(off), 16)})
}

// Section ids.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
)

// sectionRank is the position a known non-custom section must take.
var sectionRank = [...]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5,
	secGlobal: 6, secExport: 7, secStart: 8, secElement: 9, secDataCount: 10,
	secCode: 11, secData: 12,
}

// fuelTicks is the number of checks between two exits to Go, and
// bulkWeight what a bulk memory or table instruction counts for. An exit
// costs about as much as a call into the guest (~0.1 µs); a check costs a
// few cycles. 1024 checks of a tight loop take microseconds, so a guest
// holds up a stop-the-world no longer than that (a GC pause), or 16 bulk
// instructions.
const (
	fuelTicks  = 1024
	bulkWeight = 64
)

type section struct {
	id         byte
	start, end int // content, without id and size
}

// instrument returns a copy of the module bin with the stop flag and its
// checks added (see above), or an error when bin is not a module it can
// instrument. It never modifies bin.
func instrument(bin []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			ie, ok := r.(*instrumentError)
			if !ok {
				panic(r)
			}
			out, err = nil, ie
		}
	}()
	if len(bin) < 8 || string(bin[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly module (bad magic)")
	}
	if string(bin[4:8]) != "\x01\x00\x00\x00" {
		return nil, errors.New("unsupported WebAssembly binary version (want 1)")
	}

	// Split into sections and check their order.
	d := &decoder{b: bin, pos: 8}
	var secs []section
	idx := map[byte]int{} // id -> index in secs, non-custom sections
	last := 0
	for d.pos < len(bin) {
		at := d.pos
		id := d.byte()
		size := int(d.u32())
		if size > len(bin)-d.pos {
			fail(at, "section "+strconv.Itoa(int(id))+" runs past the end of the module")
		}
		s := section{id: id, start: d.pos, end: d.pos + size}
		d.pos = s.end
		if id != secCustom {
			if int(id) >= len(sectionRank) || sectionRank[id] == 0 {
				fail(at, "unsupported section id "+strconv.Itoa(int(id)))
			}
			if sectionRank[id] <= last {
				fail(at, "section "+strconv.Itoa(int(id))+" out of order or repeated")
			}
			last = sectionRank[id]
			idx[id] = len(secs)
		}
		secs = append(secs, s)
	}
	sub := func(id byte) (*decoder, bool) {
		i, ok := idx[id]
		if !ok {
			return nil, false
		}
		return &decoder{b: bin[:secs[i].end], pos: secs[i].start}, true
	}

	// The new globals' indices: after every imported and defined global.
	var nGlobals uint64
	var importedFuncs uint32
	hasMemory := false
	if d, ok := sub(secImport); ok {
		var g, mems uint32
		importedFuncs, g, mems = d.imports()
		nGlobals = uint64(g)
		hasMemory = mems > 0
		d.expectEnd("import section")
	}
	if d, ok := sub(secMemory); ok && d.u32() > 0 {
		hasMemory = true
	}
	var definedGlobals uint32
	if d, ok := sub(secGlobal); ok {
		definedGlobals = d.u32()
	}
	nGlobals += uint64(definedGlobals)
	if nGlobals >= 1<<32-2 {
		fail(0, "too many globals")
	}
	stopIdx, fuelIdx := uint32(nGlobals), uint32(nGlobals)+1

	// Exports: refuse reserved names; add the stop flag and the start
	// function.
	var nExports uint32
	var exportsBody []byte
	if d, ok := sub(secExport); ok {
		nExports = d.u32()
		bodyStart := d.pos
		for i := uint32(0); i < nExports; i++ {
			at := d.pos
			name := d.name()
			if len(name) >= len(reservedPrefix) && string(name[:len(reservedPrefix)]) == reservedPrefix {
				fail(at, "export "+strconv.Quote(string(name))+" uses a name reserved for the host (prefix "+strconv.Quote(reservedPrefix)+")")
			}
			if k := d.byte(); k > 3 {
				fail(d.pos-1, "unsupported export kind "+strconv.Itoa(int(k)))
			}
			d.u32()
		}
		d.expectEnd("export section")
		exportsBody = bin[bodyStart:d.pos]
	}
	hasStart := false
	var startFunc uint32
	if d, ok := sub(secStart); ok {
		hasStart = true
		startFunc = d.u32()
		d.expectEnd("start section")
	}

	checks := [2][]byte{
		appendCheck(nil, stopIdx, fuelIdx, 1, hasMemory),
		appendCheck(nil, stopIdx, fuelIdx, bulkWeight, hasMemory),
	}

	out = make([]byte, 0, len(bin)+len(bin)/16+64)
	out = append(out, bin[:8]...)
	emitted := map[byte]bool{}
	emitGlobal := func() {
		var c []byte
		c = appendU32(c, definedGlobals+2)
		if i, ok := idx[secGlobal]; ok {
			d := &decoder{b: bin[:secs[i].end], pos: secs[i].start}
			d.u32()
			c = append(c, bin[d.pos:secs[i].end]...) // the existing entries
		}
		c = append(c, 0x7f, 0x01, 0x41, 0x00, 0x0b) // stop: mut i32 = 0
		c = append(c, 0x7f, 0x01, 0x41)             // fuel: mut i32 = fuelTicks
		c = appendS32(c, fuelTicks)
		c = append(c, 0x0b)
		out = appendSection(out, secGlobal, c)
		emitted[secGlobal] = true
	}
	emitExport := func() {
		var c []byte
		n := nExports + 2
		if hasStart {
			n++
		}
		c = appendU32(c, n)
		c = append(c, exportsBody...)
		c = appendName(c, stopExport)
		c = append(c, 0x03)
		c = appendU32(c, stopIdx)
		c = appendName(c, fuelExport)
		c = append(c, 0x03)
		c = appendU32(c, fuelIdx)
		if hasStart {
			c = appendName(c, startExport)
			c = append(c, 0x00)
			c = appendU32(c, startFunc)
		}
		out = appendSection(out, secExport, c)
		emitted[secExport] = true
	}
	// emitBefore adds the global and export sections, if still missing,
	// before a section that must follow them.
	emitBefore := func(rank int) {
		if !emitted[secGlobal] && rank > sectionRank[secGlobal] {
			emitGlobal()
		}
		if !emitted[secExport] && rank > sectionRank[secExport] {
			emitExport()
		}
	}
	for _, s := range secs {
		if s.id == secCustom {
			out = appendSection(out, secCustom, bin[s.start:s.end])
			continue
		}
		switch s.id {
		case secGlobal:
			emitGlobal()
		case secExport:
			emitBefore(sectionRank[secExport])
			emitExport()
		case secStart:
			emitBefore(sectionRank[secStart]) // and drop the section
		case secCode:
			emitBefore(sectionRank[secCode])
			d := &decoder{b: bin[:s.end], pos: s.start}
			out = d.code(out, &checks, importedFuncs)
		default:
			emitBefore(sectionRank[s.id])
			out = appendSection(out, s.id, bin[s.start:s.end])
		}
	}
	emitBefore(len(sectionRank) + 1)
	return out, nil
}

// appendCheck appends a check (see above) of a weight.
func appendCheck(b []byte, stop, fuel uint32, weight int32, memory bool) []byte {
	b = append(b, 0x23) // global.get fuel
	b = appendU32(b, fuel)
	b = append(b, 0x41) // i32.const weight
	b = appendS32(b, weight)
	b = append(b, 0x6b, 0x24) // i32.sub; global.set fuel
	b = appendU32(b, fuel)
	b = append(b, 0x23) // global.get fuel
	b = appendU32(b, fuel)
	b = append(b, 0x41, 0x00, 0x4c, 0x04, 0x40) // i32.const 0; i32.le_s; if
	if memory {
		b = append(b, 0x41, 0x00, 0x40, 0x00, 0x1a) // i32.const 0; memory.grow; drop
	}
	b = append(b, 0x23) // global.get stop
	b = appendU32(b, stop)
	b = append(b, 0x04, 0x40, 0x00, 0x0b, 0x41) // if; unreachable; end; i32.const fuelTicks
	b = appendS32(b, fuelTicks)
	b = append(b, 0x24) // global.set fuel
	b = appendU32(b, fuel)
	return append(b, 0x0b) // end
}

func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendName(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}

func appendSection(b []byte, id byte, content []byte) []byte {
	b = append(b, id)
	b = appendU32(b, uint32(len(content)))
	return append(b, content...)
}

// decoder reads a module strictly: LEB128 numbers of at most their
// maximum length with the unused bits of the last byte clear (or, for
// signed numbers, copies of the sign), as the specification demands.
type decoder struct {
	b   []byte
	pos int
}

func (d *decoder) byte() byte {
	if d.pos >= len(d.b) {
		fail(d.pos, "unexpected end")
	}
	c := d.b[d.pos]
	d.pos++
	return c
}

func (d *decoder) expectEnd(what string) {
	if d.pos != len(d.b) {
		fail(d.pos, what+" has trailing bytes")
	}
}

func (d *decoder) u32() uint32 {
	at := d.pos
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := d.byte()
		if shift == 28 && c&0xf0 != 0 {
			fail(at, "malformed u32")
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	panic("unreachable")
}

// skipSigned skips a signed LEB128 number of bits bits (32, 33 or 64) and
// reports whether it is negative.
func (d *decoder) skipSigned(bits int) bool {
	at := d.pos
	for shift := 0; ; shift += 7 {
		c := d.byte()
		if shift+7 >= bits {
			// The last byte: its bits past the number's width must all
			// equal the sign bit, and it must not continue.
			used := bits - shift // 1..7 bits of the number in this byte
			mask := byte(0x7f) &^ (1<<(used-1) - 1)
			if c&0x80 != 0 || c&mask != 0 && c&mask != mask {
				fail(at, "malformed s"+strconv.Itoa(bits))
			}
			return c&0x40 != 0
		}
		if c&0x80 == 0 {
			return c&0x40 != 0
		}
	}
}

func (d *decoder) skip(n int) {
	if n > len(d.b)-d.pos {
		fail(d.pos, "unexpected end")
	}
	d.pos += n
}

func (d *decoder) name() []byte {
	n := int(d.u32())
	at := d.pos
	d.skip(n)
	return d.b[at:d.pos]
}

// limits skips table or memory limits: a flag byte (bit 0: a maximum
// follows; bit 1: shared), the minimum, the maximum.
func (d *decoder) limits() {
	flags := d.byte()
	if flags > 3 {
		fail(d.pos-1, "unsupported limits flags 0x"+strconv.FormatUint(uint64(flags), 16))
	}
	d.u32()
	if flags&1 != 0 {
		d.u32()
	}
}

// imports reads an import section and counts its functions, globals and
// memories.
func (d *decoder) imports() (funcs, globals, mems uint32) {
	n := d.u32()
	for i := uint32(0); i < n; i++ {
		d.name()
		d.name()
		switch k := d.byte(); k {
		case 0: // func: type index
			d.u32()
			funcs++
		case 1: // table: reftype, limits
			d.refType()
			d.limits()
		case 2: // memory
			d.limits()
			mems++
		case 3: // global: valtype, mutability
			d.valType()
			if m := d.byte(); m > 1 {
				fail(d.pos-1, "bad global mutability")
			}
			globals++
		default:
			fail(d.pos-1, "unsupported import kind "+strconv.Itoa(int(k)))
		}
	}
	return funcs, globals, mems
}

func (d *decoder) valType() {
	switch c := d.byte(); c {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f: // i32 i64 f32 f64 v128 funcref externref
	default:
		fail(d.pos-1, "unsupported value type 0x"+strconv.FormatUint(uint64(c), 16))
	}
}

func (d *decoder) refType() {
	switch c := d.byte(); c {
	case 0x70, 0x6f:
	default:
		fail(d.pos-1, "unsupported reference type 0x"+strconv.FormatUint(uint64(c), 16))
	}
}

// blockType skips a block type: empty (0x40), one value type, or a type
// index (s33, not negative).
func (d *decoder) blockType() {
	if d.pos < len(d.b) {
		switch d.b[d.pos] {
		case 0x40, 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
			d.pos++
			return
		}
	}
	at := d.pos
	if d.skipSigned(33) {
		fail(at, "unsupported block type")
	}
}

func (d *decoder) zeroByte(what string) {
	if d.byte() != 0 {
		fail(d.pos-1, what+": reserved byte must be 0x00")
	}
}

func (d *decoder) memarg() {
	at := d.pos
	if align := d.u32(); align >= 64 {
		// Bit 6 announces a memory index (multi-memory).
		fail(at, "unsupported memarg (multi-memory)")
	}
	d.u32()
}

// mark is where a check goes in a function body: an offset in the module,
// and whether the check is weighted (after a bulk instruction).
type mark struct {
	pos  int
	bulk bool
}

// code rewrites a code section and appends it, with its id and size, to out.
func (d *decoder) code(out []byte, checks *[2][]byte, importedFuncs uint32) []byte {
	n := d.u32()
	// The new section goes straight into out, after a 5-byte gap for its
	// size; once the size is known, the gap is closed to the size's
	// LEB128 length.
	out = append(out, secCode)
	sizeAt := len(out)
	out = append(out, 0, 0, 0, 0, 0)
	start := len(out)
	out = appendU32(out, n)
	var marks []mark // of the current body
	for i := uint32(0); i < n; i++ {
		size := int(d.u32())
		if size > len(d.b)-d.pos {
			fail(d.pos, "function body runs past the end of the code section")
		}
		body := &decoder{b: d.b[:d.pos+size], pos: d.pos}
		marks = body.function(marks[:0], importedFuncs)
		newSize := size
		for _, m := range marks {
			newSize += len(checks[b2i(m.bulk)])
		}
		if newSize > 1<<32-1 {
			fail(d.pos, "function body too large")
		}
		out = appendU32(out, uint32(newSize))
		at := d.pos
		for _, m := range marks {
			out = append(out, d.b[at:m.pos]...)
			out = append(out, checks[b2i(m.bulk)]...)
			at = m.pos
		}
		out = append(out, d.b[at:d.pos+size]...)
		d.pos += size
	}
	d.expectEnd("code section")
	size := len(out) - start
	if size > 1<<32-1 {
		fail(0, "code section too large")
	}
	leb := appendU32(nil, uint32(size))
	copy(out[sizeAt:], leb)
	if gap := 5 - len(leb); gap > 0 {
		copy(out[sizeAt+len(leb):], out[start:])
		out = out[:len(out)-gap]
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// function decodes one function body (locals and instructions) and appends
// to marks the places where checks go: after each loop's block type, after
// each bulk instruction, and at the start of the instructions when the
// function calls other guest functions (calls to imports, the host's
// functions, return without calling back) and does not start with a loop.
func (d *decoder) function(marks []mark, importedFuncs uint32) []mark {
	n := d.u32()
	for i := uint32(0); i < n; i++ {
		d.u32()
		d.valType()
	}
	startsWithLoop := d.pos < len(d.b) && d.b[d.pos] == 0x03
	calls := false
	entry := len(marks)
	marks = append(marks, mark{pos: d.pos}) // provisional: the entry check
	depth := 1
	for depth > 0 {
		at := d.pos
		op := d.byte()
		switch immediates[op] {
		case immNone:
		case immEnd:
			depth--
		case immBlock:
			d.blockType()
			depth++
			if op == 0x03 {
				marks = append(marks, mark{pos: d.pos})
			}
		case immU32:
			d.u32()
		case immCall:
			if d.u32() >= importedFuncs {
				calls = true
			}
		case immCallIndirect:
			d.u32()
			d.u32()
			calls = true
		case immBrTable:
			targets := d.u32()
			for j := uint32(0); j < targets; j++ {
				d.u32()
			}
			d.u32()
		case immSelectT:
			if d.byte() != 1 {
				fail(d.pos-1, "select: want exactly one type")
			}
			d.valType()
		case immMemarg:
			d.memarg()
		case immZeroByte:
			d.zeroByte("memory.size/grow")
		case immS32:
			d.skipSigned(32)
		case immS64:
			d.skipSigned(64)
		case immF32:
			d.skip(4)
		case immF64:
			d.skip(8)
		case immRefNull:
			d.refType()
		case immMisc:
			if d.misc(at) {
				marks = append(marks, mark{pos: d.pos, bulk: true})
			}
		case immSIMD:
			d.simd(at)
		default:
			fail(at, "unsupported opcode 0x"+strconv.FormatUint(uint64(op), 16))
		}
	}
	if d.pos != len(d.b) {
		fail(d.pos, "function body continues after its end")
	}
	if !calls || startsWithLoop {
		// Drop the provisional entry mark.
		marks = append(marks[:entry], marks[entry+1:]...)
	}
	return marks
}

// misc skips the 0xFC instructions: saturating truncation, bulk memory and
// table operations. It reports whether the instruction is a bulk one, whose
// cost grows with an operand.
func (d *decoder) misc(at int) (bulk bool) {
	switch op := d.u32(); op {
	case 0, 1, 2, 3, 4, 5, 6, 7: // iNN.trunc_sat_fNN_{s,u}
	case 8: // memory.init data 0x00
		d.u32()
		d.zeroByte("memory.init")
		return true
	case 9: // data.drop data
		d.u32()
	case 10: // memory.copy 0x00 0x00
		d.zeroByte("memory.copy")
		d.zeroByte("memory.copy")
		return true
	case 11: // memory.fill 0x00
		d.zeroByte("memory.fill")
		return true
	case 12, 14: // table.init elem table; table.copy table table
		d.u32()
		d.u32()
		return true
	case 17: // table.fill table
		d.u32()
		return true
	case 13, 15, 16: // elem.drop elem; table.grow, table.size table
		d.u32()
	default:
		fail(at, "unsupported opcode 0xfc "+strconv.FormatUint(uint64(op), 10))
	}
	return false
}

// simd skips a 0xFD instruction. Its sub-opcode must be in shortest form:
// wazero reads it as one byte (which is the same instruction, followed by
// a no-op 0x01 byte, for opcodes 128-255).
func (d *decoder) simd(at int) {
	op := d.u32()
	if op > 255 || (op < 128) != (d.pos-at == 2) {
		fail(at, "unsupported opcode 0xfd "+strconv.FormatUint(uint64(op), 10))
	}
	switch k := simdImmediates[op]; k {
	case simdNone:
	case simdMemarg:
		d.memarg()
	case simdMemargLane:
		d.memarg()
		d.byte()
	case simdLane:
		d.byte()
	case simdBytes16:
		d.skip(16)
	default:
		fail(at, "unsupported opcode 0xfd "+strconv.FormatUint(uint64(op), 10))
	}
}

// Immediate kinds of one-byte opcodes.
const (
	immInvalid = iota
	immNone
	immEnd
	immBlock
	immU32
	immCall
	immCallIndirect
	immBrTable
	immSelectT
	immMemarg
	immZeroByte
	immS32
	immS64
	immF32
	immF64
	immRefNull
	immMisc
	immSIMD
)

var immediates = func() (t [256]uint8) {
	set := func(lo, hi int, k uint8) {
		for op := lo; op <= hi; op++ {
			t[op] = k
		}
	}
	set(0x00, 0x01, immNone)         // unreachable, nop
	set(0x02, 0x04, immBlock)        // block, loop, if
	set(0x05, 0x05, immNone)         // else
	set(0x0b, 0x0b, immEnd)          // end
	set(0x0c, 0x0d, immU32)          // br, br_if
	set(0x0e, 0x0e, immBrTable)      // br_table
	set(0x0f, 0x0f, immNone)         // return
	set(0x10, 0x10, immCall)         // call
	set(0x11, 0x11, immCallIndirect) // call_indirect
	set(0x1a, 0x1b, immNone)         // drop, select
	set(0x1c, 0x1c, immSelectT)      // select t*
	set(0x20, 0x26, immU32)          // local.*, global.*, table.get/set
	set(0x28, 0x3e, immMemarg)       // loads and stores
	set(0x3f, 0x40, immZeroByte)     // memory.size, memory.grow
	set(0x41, 0x41, immS32)          // i32.const
	set(0x42, 0x42, immS64)          // i64.const
	set(0x43, 0x43, immF32)          // f32.const
	set(0x44, 0x44, immF64)          // f64.const
	set(0x45, 0xc4, immNone)         // numeric, sign extension
	set(0xd0, 0xd0, immRefNull)      // ref.null
	set(0xd1, 0xd1, immNone)         // ref.is_null
	set(0xd2, 0xd2, immU32)          // ref.func
	set(0xfc, 0xfc, immMisc)         // prefix
	set(0xfd, 0xfd, immSIMD)         // prefix
	return t
}()

// Immediate kinds of SIMD opcodes.
const (
	simdInvalid = iota
	simdNone
	simdMemarg
	simdMemargLane
	simdLane
	simdBytes16
)

var simdImmediates = func() (t [256]uint8) {
	set := func(lo, hi int, k uint8) {
		for op := lo; op <= hi; op++ {
			t[op] = k
		}
	}
	set(0, 11, simdMemarg)      // v128.load*, v128.store
	set(12, 13, simdBytes16)    // v128.const, i8x16.shuffle
	set(14, 20, simdNone)       // swizzle, splats
	set(21, 34, simdLane)       // extract_lane, replace_lane
	set(35, 83, simdNone)       // comparisons, bitwise, any_true
	set(84, 91, simdMemargLane) // v128.load*_lane, v128.store*_lane
	set(92, 93, simdMemarg)     // v128.load32_zero, v128.load64_zero
	set(94, 255, simdNone)      // arithmetic, conversions
	// Unassigned opcodes in 94-255.
	for _, op := range []int{154, 162, 165, 166, 175, 176, 178, 179, 180, 187, 194, 197, 198, 207, 208, 210, 211, 212, 226, 238} {
		t[op] = simdInvalid
	}
	return t
}()
