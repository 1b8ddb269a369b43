package instrument

import (
	"errors"
	"strconv"
)

const (
	// ReservedPrefix starts every export name the host adds.
	ReservedPrefix = "__toolwarden_"
	// StopExport is the stop flag: a mutable i32 global.
	StopExport = "__toolwarden_stop"
	// FuelExport is the countdown to the next exit to Go.
	FuelExport = "__toolwarden_fuel"
	// StartExport is the module's start function, when it has one.
	StartExport = "__toolwarden_start"
)

// Error is a reason Module refused a module.
type Error struct {
	msg      string
	reserved bool
}

func (e *Error) Error() string { return e.msg }

// Reserved reports whether the module was refused only because it exports
// a name reserved for the host: it was instrumented already.
func (e *Error) Reserved() bool { return e.reserved }

// fail aborts decoding; Module recovers it (and only it) into an error.
func fail(off int, msg string) {
	panic(&Error{msg: msg + " at offset 0x" + strconv.FormatInt(int64(off), 16)})
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

// FuelTicks (a power of two) is the number of loop iterations (per
// function call) or calls between two exits to Go. An exit costs about as
// much as a call into the guest (~0.1 µs); a check costs a few cycles; 1024
// iterations of a tight loop take microseconds, so a spinning guest holds
// up a stop-the-world no longer than a GC pause does.
const FuelTicks = 1024

// maxLocals bounds the parameters and locals of one function, as browsers
// do (V8 and SpiderMonkey allow 50000).
const maxLocals = 50000

type section struct {
	id         byte
	start, end int // content, without id and size
}

// Module returns a copy of the module bin with the stop flag and its
// checks added (see the package doc), or an *Error when bin is not a
// module it can instrument. It never modifies bin.
func Module(bin []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			ie, ok := r.(*Error)
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
	m := split(bin)
	m.checkBodies()
	m.readFacts()
	m.readExports()
	m.readStart()
	return m.emit(), nil
}

// module is one module being instrumented: its sections and what the
// rewrite needs to know of them.
type module struct {
	bin  []byte
	secs []section
	idx  map[byte]int // id -> index in secs, non-custom sections

	importedFuncs  uint32
	definedGlobals uint32
	hasMemory      bool
	funcParams     []uint32 // parameter count of each defined function
	stop, fuel     uint32   // the added globals' indices

	nExports    uint32
	exportsBody []byte // the existing export entries
	hasStart    bool
	startFunc   uint32

	out     []byte
	emitted map[byte]bool
}

// split cuts the module into sections and checks their order.
func split(bin []byte) *module {
	m := &module{bin: bin, idx: map[byte]int{}}
	d := &decoder{b: bin, pos: 8}
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
			m.idx[id] = len(m.secs)
		}
		m.secs = append(m.secs, s)
	}
	return m
}

// sub returns a decoder over the content of section id, if present.
func (m *module) sub(id byte) (*decoder, bool) {
	i, ok := m.idx[id]
	if !ok {
		return nil, false
	}
	return &decoder{b: m.bin[:m.secs[i].end], pos: m.secs[i].start}, true
}

// checkBodies decodes the sections the rewrite copies unchanged, so that
// every vector length in them is checked before wazero reads them.
func (m *module) checkBodies() {
	for _, s := range m.secs {
		d := &decoder{b: m.bin[:s.end], pos: s.start}
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
}

// readFacts reads the counts the rewrite depends on: imported functions
// and globals, memories, and each defined function's parameter count
// (added locals come after parameters and locals). It places the stop flag
// and the countdown after every imported and defined global.
func (m *module) readFacts() {
	var nGlobals uint64
	if d, ok := m.sub(secImport); ok {
		var g, mems uint32
		m.importedFuncs, g, mems = d.imports()
		nGlobals = uint64(g)
		m.hasMemory = mems > 0
		d.expectEnd("import section")
	}
	if d, ok := m.sub(secMemory); ok && d.u32() > 0 {
		m.hasMemory = true
	}
	var typeParams []uint32
	if d, ok := m.sub(secType); ok {
		typeParams = d.types()
		d.expectEnd("type section")
	}
	if d, ok := m.sub(secFunction); ok {
		m.funcParams = make([]uint32, d.count())
		for i := range m.funcParams {
			t := d.u32()
			if uint64(t) >= uint64(len(typeParams)) {
				fail(d.pos, "function type index out of range")
			}
			m.funcParams[i] = typeParams[t]
		}
		d.expectEnd("function section")
	}
	if d, ok := m.sub(secGlobal); ok {
		m.definedGlobals = d.count()
	}
	nGlobals += uint64(m.definedGlobals)
	if nGlobals >= 1<<32-2 {
		fail(0, "too many globals")
	}
	m.stop, m.fuel = uint32(nGlobals), uint32(nGlobals)+1
}

// readExports keeps the existing exports and refuses reserved names.
func (m *module) readExports() {
	d, ok := m.sub(secExport)
	if !ok {
		return
	}
	m.nExports = d.count()
	bodyStart := d.pos
	for i := uint32(0); i < m.nExports; i++ {
		at := d.pos
		name := d.name()
		if len(name) >= len(ReservedPrefix) && string(name[:len(ReservedPrefix)]) == ReservedPrefix {
			panic(&Error{reserved: true, msg: "export " + strconv.Quote(string(name)) + " uses a name reserved for the host (prefix " + strconv.Quote(ReservedPrefix) + ") at offset 0x" + strconv.FormatInt(int64(at), 16)})
		}
		if k := d.byte(); k > 3 {
			fail(d.pos-1, "unsupported export kind "+strconv.Itoa(int(k)))
		}
		d.u32()
	}
	d.expectEnd("export section")
	m.exportsBody = m.bin[bodyStart:d.pos]
}

// readStart finds the start function, which becomes an export.
func (m *module) readStart() {
	if d, ok := m.sub(secStart); ok {
		m.hasStart = true
		m.startFunc = d.u32()
		d.expectEnd("start section")
	}
}

// emit writes the instrumented module: sections in their order, the global
// and export sections rewritten (or added), the start section dropped, the
// code section rewritten, everything else copied.
func (m *module) emit() []byte {
	in := &instrumenter{stop: m.stop, fuel: m.fuel, memory: m.hasMemory, importedFuncs: m.importedFuncs, params: m.funcParams}
	m.out = make([]byte, 0, len(m.bin)+len(m.bin)/16+64)
	m.out = append(m.out, m.bin[:8]...)
	m.emitted = map[byte]bool{}
	for _, s := range m.secs {
		if s.id == secCustom {
			m.out = appendSection(m.out, secCustom, m.bin[s.start:s.end])
			continue
		}
		switch s.id {
		case secGlobal:
			m.emitGlobal()
		case secExport:
			m.emitBefore(sectionRank[secExport])
			m.emitExport()
		case secStart:
			m.emitBefore(sectionRank[secStart]) // and drop the section
		case secCode:
			m.emitBefore(sectionRank[secCode])
			d := &decoder{b: m.bin[:s.end], pos: s.start}
			m.out = in.code(m.out, d)
		default:
			m.emitBefore(sectionRank[s.id])
			m.out = appendSection(m.out, s.id, m.bin[s.start:s.end])
		}
	}
	m.emitBefore(len(sectionRank) + 1)
	return m.out
}

// emitGlobal writes the global section: the existing entries, then the
// stop flag (0) and the countdown (FuelTicks).
func (m *module) emitGlobal() {
	var c []byte
	c = appendU32(c, m.definedGlobals+2)
	if d, ok := m.sub(secGlobal); ok {
		d.u32()
		c = append(c, d.b[d.pos:]...) // the existing entries
	}
	c = append(c, 0x7f, 0x01, 0x41, 0x00, 0x0b) // stop: mut i32 = 0
	c = append(c, 0x7f, 0x01, 0x41)             // fuel: mut i32 = FuelTicks
	c = appendS32(c, FuelTicks)
	c = append(c, 0x0b)
	m.out = appendSection(m.out, secGlobal, c)
	m.emitted[secGlobal] = true
}

// emitExport writes the export section: the existing entries, then the
// stop flag, the countdown and the start function.
func (m *module) emitExport() {
	var c []byte
	n := m.nExports + 2
	if m.hasStart {
		n++
	}
	c = appendU32(c, n)
	c = append(c, m.exportsBody...)
	c = appendName(c, StopExport)
	c = append(c, 0x03)
	c = appendU32(c, m.stop)
	c = appendName(c, FuelExport)
	c = append(c, 0x03)
	c = appendU32(c, m.fuel)
	if m.hasStart {
		c = appendName(c, StartExport)
		c = append(c, 0x00)
		c = appendU32(c, m.startFunc)
	}
	m.out = appendSection(m.out, secExport, c)
	m.emitted[secExport] = true
}

// emitBefore adds the global and export sections, if still missing,
// before a section of the given rank that must follow them.
func (m *module) emitBefore(rank int) {
	if !m.emitted[secGlobal] && rank > sectionRank[secGlobal] {
		m.emitGlobal()
	}
	if !m.emitted[secExport] && rank > sectionRank[secExport] {
		m.emitExport()
	}
}
