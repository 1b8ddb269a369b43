package instrument

import "strconv"

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
