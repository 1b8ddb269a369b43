package pdk

import (
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Value is one JSON value of an event's input. Reading a Value never builds
// a tree: each accessor scans only as far as it must, so a plugin that reads
// two keys near the start of the input never pays for the rest of it.
//
// Why it is written the way it is: the host compiles guests with deadline
// checks, and under them every loop iteration and every function call of a
// Go guest costs as much as dozens of plain instructions. So the reader
// makes few calls (a cursor instead of callbacks, no recursion), looks at
// strings eight bytes at a time, and allocates nothing (docs/plugins.md).
//
// A Value is valid only during the event that produced it, except values
// handed to Configure. Strings returned by its methods are copies.
//
// The zero Value is "missing": Exists reports false and every accessor
// returns its zero result.
type Value struct {
	// b starts at the value's first byte and may run past its end (to the
	// end of the input); Raw finds the end.
	b []byte
}

// Kind is the JSON type of a Value.
type Kind uint8

const (
	Missing Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

// ParseValue wraps b, which must hold exactly one JSON value (white space
// around it allowed), after validating all of it.
func ParseValue(b []byte) (Value, bool) {
	s := scanner{b: b}
	s.wsLoop()
	start := s.i
	if !s.skip() {
		return Value{}, false
	}
	end := s.i
	s.wsLoop()
	if s.i != len(b) {
		return Value{}, false
	}
	return Value{b: b[start:end]}, true
}

// Raw is the value's JSON text (nil if it is malformed).
func (v Value) Raw() []byte {
	end := skipValue(v.b, 0)
	if end < 0 {
		return nil
	}
	return v.b[:end]
}

// Exists reports whether the value is present (null counts as present).
func (v Value) Exists() bool { return len(v.b) > 0 }

// Kind reports the value's JSON type.
func (v Value) Kind() Kind {
	if len(v.b) == 0 {
		return Missing
	}
	switch v.b[0] {
	case 'n':
		return Null
	case 't', 'f':
		return Bool
	case '"':
		return String
	case '[':
		return Array
	case '{':
		return Object
	}
	return Number
}

// Get returns the member key of an object, or a missing Value. It scans
// members only up to the one it finds.
func (v Value) Get(name string) Value {
	b := v.b
	for i := first(b, '{'); i >= 0; {
		k0, k1, esc, val := key(b, i)
		if val < 0 {
			break
		}
		if (esc || k1-k0 == len(name)) && is(b[k0:k1], esc, name) {
			return Value{b: b[val:]}
		}
		i = skip(b, val)
	}
	return Value{}
}

// Index returns element i of an array, or a missing Value.
func (v Value) Index(i int) Value {
	b := v.b
	for j, n := first(b, '['), 0; j >= 0; j, n = skip(b, j), n+1 {
		if n == i {
			return Value{b: b[j:]}
		}
	}
	return Value{}
}

// Len is the number of elements of an array or members of an object.
func (v Value) Len() int {
	b := v.b
	n := 0
	switch v.Kind() {
	case Array:
		for j := first(b, '['); j >= 0; j = skip(b, j) {
			n++
		}
	case Object:
		for i := first(b, '{'); i >= 0; n++ {
			_, _, _, val := key(b, i)
			if val < 0 {
				break
			}
			i = skip(b, val)
		}
	}
	return n
}

// Each calls fn for every element of an array until fn returns false.
func (v Value) Each(fn func(i int, v Value) bool) {
	b := v.b
	for j, n := first(b, '['), 0; j >= 0; j, n = skip(b, j), n+1 {
		if !fn(n, Value{b: b[j:]}) {
			return
		}
	}
}

// Members calls fn for every member of an object until fn returns false.
func (v Value) Members(fn func(key string, v Value) bool) {
	b := v.b
	for i := first(b, '{'); i >= 0; {
		k0, k1, esc, val := key(b, i)
		if val < 0 {
			return
		}
		name := string(b[k0:k1])
		if esc {
			var ok bool
			if name, ok = decodeString(b[k0:k1]); !ok {
				return
			}
		}
		if !fn(name, Value{b: b[val:]}) {
			return
		}
		i = skip(b, val)
	}
}

// HasString reports whether v is an array with a string element equal to
// s. It allocates nothing, and looks at an element that holds exactly s
// without scanning it first.
func (v Value) HasString(s string) bool {
	b := v.b
	n := len(s)
	for j := first(b, '['); j >= 0; j = skip(b, j) {
		if b[j] != '"' {
			continue
		}
		// The common case: the element's bytes are s, unescaped. A quote
		// or backslash in s could match bytes that are not one string.
		if e := j + 1 + n; e < len(b) && b[e] == '"' && eq(b[j+1:e], s) && !hasSpecial(s) {
			return true
		}
		if end, esc := str(b, j); esc && end > 0 && escapedIs(b[j+1:end-1], s) {
			return true
		}
	}
	return false
}

// hasSpecial reports whether s holds a quote, a backslash or a control
// byte.
func hasSpecial(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '"' || c == '\\' || c < 0x20 {
			return true
		}
	}
	return false
}

// Pointer resolves an RFC 6901 JSON pointer ("/options/path", "/paths/0",
// "" for the value itself). "~1" stands for '/' and "~0" for '~'.
func (v Value) Pointer(ptr string) Value {
	if ptr == "" {
		return v
	}
	if ptr[0] != '/' {
		return Value{}
	}
	cur := v
	for len(ptr) > 0 && cur.Exists() {
		ptr = ptr[1:]
		end := len(ptr)
		for i := 0; i < len(ptr); i++ {
			if ptr[i] == '/' {
				end = i
				break
			}
		}
		tok := ptr[:end]
		ptr = ptr[end:]
		if hasTilde(tok) {
			tok = unescapePointer(tok)
		}
		switch cur.Kind() {
		case Object:
			cur = cur.Get(tok)
		case Array:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || (len(tok) > 1 && tok[0] == '0') {
				return Value{}
			}
			cur = cur.Index(i)
		default:
			return Value{}
		}
	}
	return cur
}

func hasTilde(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '~' {
			return true
		}
	}
	return false
}

func unescapePointer(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && i+1 < len(s) {
			switch s[i+1] {
			case '0':
				out = append(out, '~')
				i++
				continue
			case '1':
				out = append(out, '/')
				i++
				continue
			}
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Str returns the value of a string.
func (v Value) Str() (string, bool) {
	if len(v.b) == 0 || v.b[0] != '"' {
		return "", false
	}
	end, escaped := skipStr(v.b, 0)
	if end < 0 {
		return "", false
	}
	raw := v.b[1 : end-1]
	if escaped {
		return decodeString(raw)
	}
	return string(raw), true
}

// String returns the value of a string, or "" for any other kind.
func (v Value) String() string {
	s, _ := v.Str()
	return s
}

// StrEquals reports whether v is a string equal to s, without allocating.
func (v Value) StrEquals(s string) bool {
	b := v.b
	if len(b) < 2 || b[0] != '"' {
		return false
	}
	end, escaped := str(b, 0)
	return end >= 0 && (escaped || end-2 == len(s)) && is(b[1:end-1], escaped, s)
}

// Bool returns the value of a boolean.
func (v Value) Bool() (bool, bool) {
	if len(v.b) >= 4 && string(v.b[:4]) == "true" {
		return true, true
	}
	if len(v.b) >= 5 && string(v.b[:5]) == "false" {
		return false, true
	}
	return false, false
}

// True reports whether v is the literal true.
func (v Value) True() bool { return len(v.b) >= 4 && string(v.b[:4]) == "true" }

// Float returns the value of a number.
func (v Value) Float() (float64, bool) {
	if v.Kind() != Number {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v.Raw()), 64)
	return f, err == nil
}

// Walking objects and arrays. In a guest, a Go function call costs tens of
// nanoseconds and every branch a loop takes is a jump through the
// function's dispatch table, so the helpers below do a member's work in
// two calls (key, skip), take short strings and literals without further
// calls, pass indices rather than iterator structs (copying a struct is a
// bulk memory operation), and check the host's compact JSON first, white
// space second.

// first returns the index of the first member (its key's quote) or element
// of the object or array at b[0], whose opening bracket is open; -1 if b is
// not one or is empty.
func first(b []byte, open byte) int {
	if len(b) < 2 || b[0] != open {
		return -1
	}
	i := 1
	if b[i] <= ' ' {
		if i = skipWS(b, i); i >= len(b) {
			return -1
		}
	}
	if c := b[i]; c == '}' || c == ']' {
		return -1
	}
	return i
}

// key reads the object member whose key starts at b[i]: the key's bounds
// b[k0:k1], whether it holds escapes, and the index of the value; val is
// -1 on a syntax error. The key is scanned here, not by a call to skipStr:
// in a guest the call costs more than a short key.
func key(b []byte, i int) (k0, k1 int, escaped bool, val int) {
	if i >= len(b) || b[i] != '"' {
		return 0, 0, false, -1
	}
	j := i + 1
	for {
		for j+8 <= len(b) {
			if m := specialMask(load64(b, j)); m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
		}
		if j >= len(b) {
			return 0, 0, false, -1
		}
		c := b[j]
		if c == '"' {
			break
		}
		if c == '\\' {
			escaped = true
			j += 2
			continue
		}
		if c < 0x20 {
			return 0, 0, false, -1
		}
		j++
	}
	k1 = j
	j++
	if j >= len(b) {
		return 0, 0, false, -1
	}
	if b[j] != ':' {
		if j = skipWS(b, j); j >= len(b) || b[j] != ':' {
			return 0, 0, false, -1
		}
	}
	j++
	if j < len(b) && b[j] <= ' ' {
		j = skipWS(b, j)
	}
	if j >= len(b) {
		return 0, 0, false, -1
	}
	return i + 1, k1, escaped, j
}

// skip skips the value at b[i] and the comma after it, and returns the
// index of the next member or element, or -1 at the end of the object or
// array or on a syntax error.
func skip(b []byte, i int) int {
	var e int
	switch c := b[i]; {
	case c == '"':
		e, _ = str(b, i)
	case c == '{' || c == '[':
		e = skipValue(b, i)
	default:
		e = i
		for e < len(b) && b[e] != ',' && b[e] != '}' && b[e] != ']' && b[e] > ' ' {
			e++
		}
		if e == i {
			return -1
		}
	}
	if e < 0 {
		return -1
	}
	return sep(b, e)
}

// sep reads the separator after a value that ends before b[i]: it returns
// the index of the next member or element, or -1 at the end of the object
// or array.
func sep(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	if b[i] != ',' {
		if i = skipWS(b, i); i >= len(b) || b[i] != ',' {
			return -1
		}
	}
	i++
	if i < len(b) && b[i] <= ' ' {
		i = skipWS(b, i)
	}
	if i >= len(b) {
		return -1
	}
	return i
}

// str returns the index after the string at b[i] and whether it holds
// escapes; -1 if it is malformed. A string of up to seven bytes takes one
// eight-byte look.
func str(b []byte, i int) (int, bool) {
	if i+9 <= len(b) {
		if m := specialMask(load64(b, i+1)); m != 0 {
			if p := i + 1 + bits.TrailingZeros64(m)>>3; b[p] == '"' {
				return p + 1, false
			}
		}
	}
	return skipStr(b, i)
}

// is reports whether a raw string (between its quotes; escaped says
// whether it holds escapes) decodes to s.
func is(raw []byte, escaped bool, s string) bool {
	if escaped {
		return escapedIs(raw, s)
	}
	return len(raw) == len(s) && eq(raw, s)
}

func escapedIs(raw []byte, s string) bool {
	d, ok := decodeString(raw)
	return ok && d == s
}

func skipWS(b []byte, i int) int {
	if i < len(b) && b[i] <= ' ' {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	return i
}

// skipStr returns the index after the string that starts at b[i] (a '"'),
// or -1, and whether the string has escapes. It looks at eight bytes per
// iteration and jumps straight to the next quote, backslash or control
// byte.
func skipStr(b []byte, i int) (int, bool) {
	i++
	escaped := false
	for {
		for i+8 <= len(b) {
			if m := specialMask(load64(b, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			return -1, escaped
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped
		case c == '\\':
			escaped = true
			i += 2
		case c < 0x20:
			return -1, escaped
		default:
			i++
		}
	}
}

// skipValue returns the index after the value that starts at b[i], or -1.
// It checks structure (brackets and strings), not the spelling of numbers
// and literals: the host validates what it sends, and ParseValue validates
// fully where that matters. No recursion; inside an object or array it
// jumps eight bytes at a time to the next quote or bracket.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		i, _ = str(b, i)
		return i
	case '{', '[':
	case ',', ':', ' ', '\t', '\n', '\r', '}', ']':
		return -1
	default:
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] > ' ' {
			i++
		}
		return i
	}
	depth := 0
	for {
		for i+8 <= len(b) {
			if m := structMask(load64(b, i)); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(b) {
			return -1
		}
		switch b[i] {
		case '"':
			if i, _ = skipStr(b, i); i < 0 {
				return -1
			}
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
}

// structMask has the high bit set in each byte of x that may be '"', '{',
// '}', '[' or ']'. The lowest set byte is one of them or the control byte
// 0x02, which callers step over.
func structMask(x uint64) uint64 {
	y := x | 0x20*lo8 // '[' -> '{', ']' -> '}'
	q := y ^ ('"' * lo8)
	o := y ^ ('{' * lo8)
	c := y ^ ('}' * lo8)
	return ((q-lo8)&^q | (o-lo8)&^o | (c-lo8)&^c) & hi8
}

// eq reports whether b holds the bytes of s. It compares eight (or four)
// bytes at a time, the last word overlapping the one before, instead of
// calling memequal, which costs a guest more than the comparison.
func eq(b []byte, s string) bool {
	n := len(s)
	if len(b) != n {
		return false
	}
	switch {
	case n >= 8:
		for i := 0; i+8 < n; i += 8 {
			if load64(b, i) != load64s(s, i) {
				return false
			}
		}
		return load64(b, n-8) == load64s(s, n-8)
	case n >= 4:
		return load32(b, 0) == load32s(s, 0) && load32(b, n-4) == load32s(s, n-4)
	}
	for i := 0; i < n; i++ {
		if b[i] != s[i] {
			return false
		}
	}
	return true
}

func load32(b []byte, i int) uint32 {
	_ = b[i+3]
	return *(*uint32)(unsafe.Pointer(&b[i]))
}

func load32s(s string, i int) uint32 {
	_ = s[i+3]
	return *(*uint32)(unsafe.Pointer(unsafe.StringData(s[i:])))
}

func load64(b []byte, i int) uint64 {
	_ = b[i+7]
	return *(*uint64)(unsafe.Pointer(&b[i]))
}

func load64s(s string, i int) uint64 {
	_ = s[i+7]
	return *(*uint64)(unsafe.Pointer(unsafe.StringData(s[i:])))
}

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// specialMask has the high bit set in each byte of x (little-endian) that
// may be '"', '\\' or below 0x20. The lowest set byte is always exact (the
// subtraction trick only errs above a true match).
func specialMask(x uint64) uint64 {
	q := x ^ ('"' * lo8)
	bs := x ^ ('\\' * lo8)
	return ((q-lo8)&^q | (bs-lo8)&^bs | (x-0x20*lo8)&^x) & hi8
}

// scanner is the strict validator behind ParseValue (RFC 8259 grammar,
// nesting capped at 256).
type scanner struct {
	b     []byte
	i     int
	depth int
}

func (s *scanner) wsLoop() { s.i = skipWS(s.b, s.i) }

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) skip() bool {
	s.wsLoop()
	switch c := s.peek(); c {
	case '{', '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		s.depth++
		if s.depth > 256 {
			return false
		}
		s.i++
		s.wsLoop()
		if s.peek() == closing {
			s.i++
			s.depth--
			return true
		}
		for {
			s.wsLoop()
			if c == '{' {
				if s.peek() != '"' || !s.str() {
					return false
				}
				s.wsLoop()
				if s.peek() != ':' {
					return false
				}
				s.i++
			}
			if !s.skip() {
				return false
			}
			s.wsLoop()
			switch s.peek() {
			case ',':
				s.i++
			case closing:
				s.i++
				s.depth--
				return true
			default:
				return false
			}
		}
	case '"':
		return s.str()
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return s.number()
		}
		return false
	}
}

// str validates a string, escapes included.
func (s *scanner) str() bool {
	end, escaped := skipStr(s.b, s.i)
	if end < 0 {
		return false
	}
	if escaped {
		if _, ok := decodeString(s.b[s.i+1 : end-1]); !ok {
			return false
		}
	}
	s.i = end
	return true
}

func (s *scanner) lit(l string) bool {
	if len(s.b)-s.i < len(l) || string(s.b[s.i:s.i+len(l)]) != l {
		return false
	}
	s.i += len(l)
	return true
}

func (s *scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digitsEnd(b, i)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		d := i + 1
		if i = digitsEnd(b, d); i == d {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		if i = digitsEnd(b, d); i == d {
			return false
		}
	}
	s.i = i
	return true
}

// digitsEnd is the index after the run of decimal digits at b[i:].
func digitsEnd(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func decodeString(raw []byte) (string, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(raw) {
			return "", false
		}
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(raw, i+1)
			if !ok {
				return "", false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					if r2, ok := hex4(raw, i+3); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							r = d
							i += 6
						}
					}
				}
				if utf16.IsSurrogate(r) {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var v rune
	for _, c := range b[i : i+4] {
		v <<= 4
		switch {
		case c >= '0' && c <= '9':
			v |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			v |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			v |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	return v, true
}
