package rawjson

import "unicode/utf8"

// decodeString decodes a string's raw content (valid, see Check) to bytes:
// valid UTF-8 for what is valid, a lone surrogate as its three-byte
// (WTF-8) form and an invalid byte as itself. Unlike a Go string decode it
// loses nothing a comparison with a protocol key could need; ok is false
// only for malformed content.
func decodeString(inner []byte) (out []byte, ok bool) {
	ok = true
	out = make([]byte, 0, len(inner))
	walkString(inner, func(u Unit) {
		switch {
		case u.Malformed:
			ok = false
		case u.Invalid:
			out = append(out, byte(u.R))
		case u.R >= 0xD800 && u.R < 0xE000:
			out = append(out, 0xE0|byte(u.R>>12), 0x80|byte(u.R>>6&0x3F), 0x80|byte(u.R&0x3F))
		default:
			out = utf8.AppendRune(out, u.R)
		}
	})
	return out, ok
}

// Unit is one element of a JSON string's content once its escapes are
// decoded: a Unicode scalar value, a lone surrogate (R in D800-DFFF, from
// an escape), or a byte that is not UTF-8 (Invalid, R the byte).
// Malformed marks what no valid string holds (a bad or cut escape).
type Unit struct {
	R                  rune
	Invalid, Malformed bool
}

// DecodeUnit decodes the unit at s[i], where s is a string's content
// between its quotes, and returns it with the bytes it takes in s: an
// escaped surrogate pair is one unit. A Malformed unit takes the rest.
func DecodeUnit(s []byte, i int) (Unit, int) {
	c := s[i]
	switch {
	case c < utf8.RuneSelf && c != '\\':
		return Unit{R: rune(c)}, 1
	case c != '\\':
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			return Unit{R: rune(c), Invalid: true}, 1
		}
		return Unit{R: r}, size
	case i+1 >= len(s):
		return Unit{Malformed: true}, len(s) - i
	}
	switch e := s[i+1]; e {
	case '"', '\\', '/':
		return Unit{R: rune(e)}, 2
	case 'b':
		return Unit{R: '\b'}, 2
	case 'f':
		return Unit{R: '\f'}, 2
	case 'n':
		return Unit{R: '\n'}, 2
	case 'r':
		return Unit{R: '\r'}, 2
	case 't':
		return Unit{R: '\t'}, 2
	case 'u':
		u, ok := hex4(s, i+2)
		if !ok {
			return Unit{Malformed: true}, len(s) - i
		}
		if u >= 0xD800 && u < 0xDC00 && i+7 < len(s) && s[i+6] == '\\' && s[i+7] == 'u' {
			if lo, ok := hex4(s, i+8); ok && lo >= 0xDC00 && lo < 0xE000 {
				return Unit{R: 0x10000 + (u-0xD800)<<10 + (lo - 0xDC00)}, 12
			}
		}
		return Unit{R: u}, 6 // a scalar value, or a lone surrogate
	}
	return Unit{Malformed: true}, len(s) - i
}

// walkString calls fn with each unit of a string's raw content, escapes
// decoded and surrogate pairs joined, up to the first malformed one.
func walkString(inner []byte, fn func(Unit)) {
	for i := 0; i < len(inner); {
		u, n := DecodeUnit(inner, i)
		fn(u)
		if u.Malformed {
			return
		}
		i += n
	}
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, h := range b[i : i+4] {
		switch {
		case h >= '0' && h <= '9':
			r = r<<4 | rune(h-'0')
		case h >= 'a' && h <= 'f':
			r = r<<4 | rune(h-'a'+10)
		case h >= 'A' && h <= 'F':
			r = r<<4 | rune(h-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
