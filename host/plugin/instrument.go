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
// others: the stop flag, exported as __toolwarden_stop, which only the host
// writes, and a countdown, __toolwarden_fuel. Checks are inserted:
//
//   - at the start of every loop body:
//     if stop | (++c & (fuelTicks-1)) == 0 { tick }
//     where c is a local added to the function (0 at entry, like every
//     local);
//   - at the start of every function that calls another guest function:
//     if --fuel <= 0 { tick; fuel = fuelTicks }
//   - after every bulk memory or table instruction, weighted by its size n
//     (saved in a second added local):
//     if (fuel -= 1 + n>>16) <= 0 { tick; fuel = fuelTicks }
//
// and tick is
//
//	memory.grow 0            ;; an exit to Go: a safepoint
//	if stop { unreachable }  ;; the deadline passed: trap
//
// Every unbounded execution iterates a loop without end or makes calls
// without end (recursion, or an exponential call tree), so it passes checks
// without end. When an event's deadline passes, the host sets stop to 1 and
// fuel to 0 from a timer (instance.go): the guest traps at its next loop
// header or function entry.
//
// The countdowns exist because the timer needs a goroutine, and Go cannot
// run one while another goroutine, spinning in compiled wasm, holds up a
// stop-the-world (a GC phase, ReadMemStats): native code is never preempted
// (wazero's RATIONALE.md, "Why context cancellation is handled in Go code";
// wazero #1409). So every fuelTicks loop iterations, calls, or 64 KiB of
// bulk memory work, the guest exits to Go, where the scheduler can park it;
// memory.grow 0 is the cheapest exit (the ABI requires a memory; it changes
// nothing). Loops count in a local: a global written in every iteration
// chains each iteration to the previous one's store, which cost Go guests,
// whose every jump passes their function's loop header, 10% more (a
// hand-written WAT scanner fares a little better with the global). The
// guest's writes to fuel may overwrite
// the host's 0; stop is never written by the guest, so the guest then
// traps at its next loop header or, at the latest, fuelTicks calls later.
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

// fuelTicks (a power of two) is the number of loop iterations (per
// function call) or calls between two exits to Go. An exit costs about as
// much as a call into the guest (~0.1 µs); a check costs a few cycles; 1024
// iterations of a tight loop take microseconds, so a spinning guest holds
// up a stop-the-world no longer than a GC pause does.
const fuelTicks = 1024

// maxLocals bounds the parameters and locals of one function, as browsers
// do (V8 and SpiderMonkey allow 50000).
const maxLocals = 50000

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

	for _, s := range secs {
		d := &decoder{b: bin[:s.end], pos: s.start}
		switch s.id {
		case secCustom:
			d.custom()
		case secTable:
			d.tables()
		case secMemory:
			d.memories()
		case secGlobal:
			d.globals()
		case secElement:
			d.elements()
		case secData:
			d.data()
		case secDataCount:
			d.u32()
			d.expectEnd("data count section")
		}
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
	// Parameter counts of the defined functions: added locals come after
	// parameters and locals.
	var typeParams []uint32
	if d, ok := sub(secType); ok {
		typeParams = d.types()
		d.expectEnd("type section")
	}
	var funcParams []uint32
	if d, ok := sub(secFunction); ok {
		funcParams = make([]uint32, d.count())
		for i := range funcParams {
			t := d.u32()
			if uint64(t) >= uint64(len(typeParams)) {
				fail(d.pos, "function type index out of range")
			}
			funcParams[i] = typeParams[t]
		}
		d.expectEnd("function section")
	}
	var definedGlobals uint32
	if d, ok := sub(secGlobal); ok {
		definedGlobals = d.count()
	}
	nGlobals += uint64(definedGlobals)
	if nGlobals >= 1<<32-2 {
		fail(0, "too many globals")
	}
	stopIdx, fuelIdx := uint32(nGlobals), uint32(nGlobals)+1

	// Exports: refuse reserved names; add the stop flag, the countdown and
	// the start function.
	var nExports uint32
	var exportsBody []byte
	if d, ok := sub(secExport); ok {
		nExports = d.count()
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

	in := &instrumenter{stop: stopIdx, fuel: fuelIdx, memory: hasMemory, importedFuncs: importedFuncs, params: funcParams}

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
			out = in.code(out, d)
		default:
			emitBefore(sectionRank[s.id])
			out = appendSection(out, s.id, bin[s.start:s.end])
		}
	}
	emitBefore(len(sectionRank) + 1)
	return out, nil
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

// signed reads a signed LEB128 number of at most bits bits (32, 33 or
// 64). Only the length is checked (at most ceil(bits/7) bytes): wazero
// does not insist that the unused bits of the last byte copy the sign, and
// an instruction's length depends only on the continuation bits.
func (d *decoder) signed(bits int) int64 {
	at := d.pos
	var v int64
	shift := 0
	for {
		c := d.byte()
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v
		}
		if shift >= bits {
			fail(at, "malformed s"+strconv.Itoa(bits))
		}
	}
}

// count reads the length of a vector whose elements take at least a byte
// each, and refuses one longer than the bytes left: wazero allocates a
// vector's elements before reading them, so a forged length would make it
// allocate gigabytes (and the host die of it) for a few bytes of input.
func (d *decoder) count() uint32 {
	at := d.pos
	n := d.u32()
	if uint64(n) > uint64(len(d.b)-d.pos) {
		fail(at, "vector length "+strconv.FormatUint(uint64(n), 10)+" is longer than the bytes left")
	}
	return n
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

// types reads a type section and returns each type's parameter count.
func (d *decoder) types() []uint32 {
	params := make([]uint32, d.count())
	for i := range params {
		if f := d.byte(); f != 0x60 {
			fail(d.pos-1, "unsupported type form 0x"+strconv.FormatUint(uint64(f), 16))
		}
		params[i] = d.count()
		for j := uint32(0); j < params[i]; j++ {
			d.valType()
		}
		results := d.count()
		for j := uint32(0); j < results; j++ {
			d.valType()
		}
	}
	return params
}

// The section readers below check what wazero will read, before it
// allocates: every vector length against the bytes left (see count).

func (d *decoder) tables() {
	for n := d.count(); n > 0; n-- {
		d.refType()
		d.limits()
	}
	d.expectEnd("table section")
}

func (d *decoder) memories() {
	for n := d.count(); n > 0; n-- {
		d.limits()
	}
	d.expectEnd("memory section")
}

func (d *decoder) globals() {
	for n := d.count(); n > 0; n-- {
		d.valType()
		if m := d.byte(); m > 1 {
			fail(d.pos-1, "bad global mutability")
		}
		d.constExpr()
	}
	d.expectEnd("global section")
}

func (d *decoder) elements() {
	for n := d.count(); n > 0; n-- {
		at := d.pos
		flags := d.u32()
		if flags > 7 {
			fail(at, "unsupported element segment flags "+strconv.FormatUint(uint64(flags), 10))
		}
		if flags == 2 || flags == 6 {
			d.u32() // table index
		}
		if flags&1 == 0 {
			d.constExpr() // offset
		}
		exprs := flags&4 != 0
		if flags&3 != 0 {
			if exprs {
				d.refType()
			} else if k := d.byte(); k != 0 {
				fail(d.pos-1, "unsupported element kind")
			}
		}
		for m := d.count(); m > 0; m-- {
			if exprs {
				d.constExpr()
			} else {
				d.u32()
			}
		}
	}
	d.expectEnd("element section")
}

func (d *decoder) data() {
	for n := d.count(); n > 0; n-- {
		at := d.pos
		switch flags := d.u32(); flags {
		case 0:
			d.constExpr()
		case 1:
		case 2:
			d.u32() // memory index
			d.constExpr()
		default:
			fail(at, "unsupported data segment flags "+strconv.FormatUint(uint64(flags), 10))
		}
		d.skip(int(d.count()))
	}
	d.expectEnd("data section")
}

// constExpr skips a constant expression: instructions up to an end.
func (d *decoder) constExpr() {
	for {
		at := d.pos
		op := d.byte()
		switch immediates[op] {
		case immEnd:
			return
		case immNone:
		case immU32:
			d.u32()
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
			fail(at, "unsupported opcode 0x"+strconv.FormatUint(uint64(op), 16)+" in a constant expression")
		}
	}
}

// custom checks the custom section wazero decodes, "name", the way wazero
// reads it (internal/wasm/binary/names.go). Other custom sections are
// opaque.
func (d *decoder) custom() {
	if string(d.name()) != "name" {
		return
	}
	for d.pos < len(d.b) {
		id := d.byte()
		size := int(d.u32())
		switch id {
		case 0: // module name
			d.name()
		case 1: // function names
			for n := d.count(); n > 0; n-- {
				d.u32()
				d.name()
			}
		case 2: // local names
			for n := d.count(); n > 0; n-- {
				d.u32()
				for m := d.count(); m > 0; m-- {
					d.u32()
					d.name()
				}
			}
		default:
			d.skip(size)
		}
	}
}

// imports reads an import section and counts its functions, globals and
// memories.
func (d *decoder) imports() (funcs, globals, mems uint32) {
	n := d.count()
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

// blockType skips a block type, an s33: empty (0x40, -64), one value type
// (0x7f..0x7b, 0x70, 0x6f: -1..-5, -16, -17) or a type index.
func (d *decoder) blockType() {
	at := d.pos
	// The 33-bit value, as wazero reads it.
	v := d.signed(33) & (1<<33 - 1)
	if v&(1<<32) != 0 {
		v -= 1 << 33
	}
	switch {
	case v >= 0, v == -64, v >= -5 && v <= -1, v == -16, v == -17:
	default:
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

// instrumenter rewrites function bodies.
type instrumenter struct {
	stop, fuel    uint32 // global indices
	memory        bool   // the module has a memory (tick can use memory.grow)
	importedFuncs uint32
	params        []uint32 // parameter count of each defined function
	marks         []mark
	body          []byte // scratch: one rewritten body
}

// mark is where inserted code goes in a function body: an offset in the
// module and what goes there.
type mark struct {
	pos  int
	kind uint8
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
			body = in.appendLoopCheck(body, c)
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

// appendLoopCheck appends `if stop | (++c & (fuelTicks-1)) == 0 { tick }`.
func (in *instrumenter) appendLoopCheck(b []byte, c uint32) []byte {
	b = append(b, 0x23) // global.get stop
	b = appendU32(b, in.stop)
	b = append(b, 0x20) // local.get c
	b = appendU32(b, c)
	b = append(b, 0x41, 0x01, 0x6a, 0x22) // i32.const 1; i32.add; local.tee c
	b = appendU32(b, c)
	b = append(b, 0x41) // i32.const fuelTicks-1
	b = appendS32(b, fuelTicks-1)
	b = append(b, 0x71, 0x45, 0x72, 0x04, 0x40) // i32.and; i32.eqz; i32.or; if
	b = in.appendTick(b)
	return append(b, 0x0b) // end
}

// appendFuelCheck appends `if (fuel -= w) <= 0 { tick; fuel = fuelTicks }`,
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
	b = append(b, 0x41) // i32.const fuelTicks; global.set fuel
	b = appendS32(b, fuelTicks)
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
				in.marks = append(in.marks, mark{pos: d.pos, kind: markLoop})
				loops = true
			}
		case immU32:
			d.u32()
		case immCall:
			if d.u32() >= in.importedFuncs {
				calls = true
			}
		case immCallIndirect:
			d.u32()
			d.u32()
			calls = true
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
		case immMisc:
			if d.misc(at) {
				in.marks = append(in.marks, mark{pos: at, kind: markBulkBefore}, mark{pos: d.pos, kind: markBulkAfter})
				bulk = true
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
	return calls, loops, bulk
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
