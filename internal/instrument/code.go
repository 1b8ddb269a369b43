package instrument

import "strconv"

// instrumenter rewrites function bodies.
type instrumenter struct {
	stop, fuel    uint32 // global indices
	memory        bool   // the module has a memory (tick can use memory.grow)
	importedFuncs uint32
	params        []uint32 // parameter count of each defined function
	marks         []mark
	open          []int  // scratch: scan's open blocks
	body          []byte // scratch: one rewritten body
}

// mark is where inserted code goes in a function body: an offset in the
// module and what goes there.
type mark struct {
	pos  int
	kind uint8
	// weight is what one iteration of a loop adds to the loop counter:
	// 1 + the loop's size in bytes / LoopBytesPerTick (loopWeight).
	weight uint32
}

// LoopBytesPerTick is the loop body size, in bytes of code, that counts as
// one more iteration: a loop whose body is n bytes reaches the flag every
// FuelTicks / (1 + n/LoopBytesPerTick) iterations, so that at most about
// FuelTicks * LoopBytesPerTick bytes of straight-line code (64 KiB, tens of
// microseconds) run between two looks at the flag, however big the body.
// Nested loops and calls in the body run their own checks.
const LoopBytesPerTick = 64

// loopWeight is the counter step of a loop whose body is size bytes.
func loopWeight(size int) uint32 {
	return uint32(min(1+size/LoopBytesPerTick, FuelTicks))
}

const (
	markLoop       uint8 = iota // a loop check, at the start of a loop body
	markBulkBefore              // save a bulk instruction's size, before it
	markBulkAfter               // a weighted fuel check, after it
)

// code rewrites a code section and appends it, with its id and size, to out.
func (in *instrumenter) code(out []byte, d *decoder) []byte {
	n := d.count()
	if uint64(n) != uint64(len(in.params)) {
		fail(d.pos, "the code and function sections differ in length")
	}
	// The new section goes straight into out, after a 5-byte gap for its
	// size; once the size is known, the gap is closed to the size's
	// LEB128 length.
	out = append(out, secCode)
	sizeAt := len(out)
	out = append(out, 0, 0, 0, 0, 0)
	start := len(out)
	out = appendU32(out, n)
	for i := uint32(0); i < n; i++ {
		size := int(d.u32())
		if size > len(d.b)-d.pos {
			fail(d.pos, "function body runs past the end of the code section")
		}
		in.function(d.b[:d.pos+size], d.pos, in.params[i])
		if uint64(len(in.body)) > 1<<32-1 {
			fail(d.pos, "function body too large")
		}
		out = appendU32(out, uint32(len(in.body)))
		out = append(out, in.body...)
		d.pos += size
	}
	d.expectEnd("code section")
	size := len(out) - start
	if uint64(size) > 1<<32-1 {
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

// function rewrites the body b[pos:] of a function with params parameters
// into in.body.
func (in *instrumenter) function(b []byte, pos int, params uint32) {
	d := &decoder{b: b, pos: pos}
	nEntries := d.count()
	entries := d.pos
	locals := uint64(params)
	for i := uint32(0); i < nEntries; i++ {
		locals += uint64(d.u32())
		d.valType()
	}
	// wazero allocates a byte per local before it looks at the code.
	if locals > maxLocals {
		fail(pos, "too many locals ("+strconv.FormatUint(locals, 10)+", at most "+strconv.Itoa(maxLocals)+")")
	}
	first := d.pos
	calls, loops, bulk := in.scan(d)

	// Added locals: the loop counter c, the bulk size t.
	var added uint32
	c, t := uint32(locals), uint32(locals)
	if loops {
		added++
		t++
	}
	if bulk {
		added++
	}
	if locals+uint64(added) > 1<<32-1 || added > 0 && nEntries == 1<<32-1 {
		fail(pos, "too many locals")
	}

	body := in.body[:0]
	if added > 0 {
		// One more locals entry: `added` i32s.
		body = appendU32(body, nEntries+1)
		body = append(body, b[entries:first]...)
		body = appendU32(body, added)
		body = append(body, 0x7f)
	} else {
		body = append(body, b[pos:first]...)
	}
	if calls {
		body = in.appendFuelCheck(body, 0, false)
	}
	at := first
	for _, m := range in.marks {
		body = append(body, b[at:m.pos]...)
		at = m.pos
		switch m.kind {
		case markLoop:
			body = in.appendLoopCheck(body, c, m.weight)
		case markBulkBefore:
			body = append(body, 0x22) // local.tee t
			body = appendU32(body, t)
		case markBulkAfter:
			body = in.appendFuelCheck(body, t, true)
		}
	}
	in.body = append(body, b[at:]...)
}

// appendTick appends `memory.grow 0; drop; if stop { unreachable }`.
func (in *instrumenter) appendTick(b []byte) []byte {
	if in.memory {
		b = append(b, 0x41, 0x00, 0x40, 0x00, 0x1a) // i32.const 0; memory.grow; drop
	}
	b = append(b, 0x23) // global.get stop
	b = appendU32(b, in.stop)
	return append(b, 0x04, 0x40, 0x00, 0x0b) // if; unreachable; end
}

// appendLoopCheck appends `if (c += w) >= FuelTicks { c = 0; tick }`.
// The flag is read only in tick: a loop header costs an add, a compare and
// a branch on a local (a register), not a load of a global per iteration,
// which cost the first-party plugins 15-30% of their time.
func (in *instrumenter) appendLoopCheck(b []byte, c, w uint32) []byte {
	b = append(b, 0x20) // local.get c
	b = appendU32(b, c)
	b = append(b, 0x41) // i32.const w
	b = appendS32(b, int32(w))
	b = append(b, 0x6a, 0x22) // i32.add; local.tee c
	b = appendU32(b, c)
	b = append(b, 0x41) // i32.const FuelTicks
	b = appendS32(b, FuelTicks)
	b = append(b, 0x4f, 0x04, 0x40, 0x41, 0x00, 0x21) // i32.ge_u; if; i32.const 0; local.set c
	b = appendU32(b, c)
	b = in.appendTick(b)
	return append(b, 0x0b) // end
}

// appendFuelCheck appends `if (fuel -= w) <= 0 { tick; fuel = FuelTicks }`,
// where w is 1, or 1 + t>>16 when sized.
func (in *instrumenter) appendFuelCheck(b []byte, t uint32, sized bool) []byte {
	b = append(b, 0x23) // global.get fuel
	b = appendU32(b, in.fuel)
	if sized {
		b = append(b, 0x20) // local.get t; i32.const 16; i32.shr_u; i32.const 1; i32.add
		b = appendU32(b, t)
		b = append(b, 0x41, 0x10, 0x76, 0x41, 0x01, 0x6a)
	} else {
		b = append(b, 0x41, 0x01) // i32.const 1
	}
	b = append(b, 0x6b, 0x24) // i32.sub; global.set fuel
	b = appendU32(b, in.fuel)
	b = append(b, 0x23) // global.get fuel
	b = appendU32(b, in.fuel)
	b = append(b, 0x41, 0x00, 0x4c, 0x04, 0x40) // i32.const 0; i32.le_s; if
	b = in.appendTick(b)
	b = append(b, 0x41) // i32.const FuelTicks; global.set fuel
	b = appendS32(b, FuelTicks)
	b = append(b, 0x24)
	b = appendU32(b, in.fuel)
	return append(b, 0x0b) // end
}

// scan decodes the instructions of a function body, recording in in.marks
// where code goes, and reports whether the function calls other guest
// functions (calls to imports, the host's functions, return without calling
// back), has loops, and has bulk instructions.
func (in *instrumenter) scan(d *decoder) (calls, loops, bulk bool) {
	in.marks = in.marks[:0]
	// open holds, for each open block, the index of its loop mark, or -1
	// for a block, an if or the function's body.
	in.open = append(in.open[:0], -1)
	for len(in.open) > 0 {
		at := d.pos
		op := d.byte()
		switch immediates[op] {
		case immNone:
		case immEnd:
			if i := in.open[len(in.open)-1]; i >= 0 {
				in.marks[i].weight = loopWeight(d.pos - in.marks[i].pos)
			}
			in.open = in.open[:len(in.open)-1]
		case immBlock:
			d.blockType()
			if op == 0x03 {
				in.open = append(in.open, len(in.marks))
				in.marks = append(in.marks, mark{pos: d.pos, kind: markLoop})
				loops = true
			} else {
				in.open = append(in.open, -1)
			}
		case immCall:
			if d.u32() >= in.importedFuncs {
				calls = true
			}
		case immCallIndirect:
			d.u32()
			d.u32()
			calls = true
		case immMisc:
			if d.misc(at) {
				in.marks = append(in.marks, mark{pos: at, kind: markBulkBefore}, mark{pos: d.pos, kind: markBulkAfter})
				bulk = true
			}
		default:
			d.operands(op, at)
		}
	}
	if d.pos != len(d.b) {
		fail(d.pos, "function body continues after its end")
	}
	return calls, loops, bulk
}

// operands skips the immediates of an instruction that neither opens or
// closes a block, calls, nor is a 0xFC one (scan handles those), failing on
// an opcode the instrumenter does not know.
func (d *decoder) operands(op byte, at int) {
	switch immediates[op] {
	case immU32:
		d.u32()
	case immBrTable:
		targets := d.count()
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
		d.signed(32)
	case immS64:
		d.signed(64)
	case immF32:
		d.skip(4)
	case immF64:
		d.skip(8)
	case immRefNull:
		d.refType()
	case immSIMD:
		d.simd(at)
	default:
		fail(at, "unsupported opcode 0x"+strconv.FormatUint(uint64(op), 16))
	}
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
