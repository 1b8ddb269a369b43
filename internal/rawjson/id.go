package rawjson

// MaxSafeInteger is the largest integer id accepted: 2^53-1, the largest
// every JavaScript client holds exactly (and the largest mcp-go, which
// reads ids as float64, echoes back unchanged).
const MaxSafeInteger = 1<<53 - 1

// IDKey is the identity of a raw JSON-RPC id, for comparing and keying
// ids: the same key exactly when the ids have the same JSON type and
// value. MCP allows strings and integers only, so ok is false for
// anything else: null, true, objects, arrays, and numbers written with a
// fraction or an exponent (1.5, but also 2.0 and 2e0: MCP ids are
// integers, and a client that means 2 writes 2), or outside
// ±MaxSafeInteger.
//
// A string is keyed by its canonical spelling (see Canonical), so "2"
// and "\u0032" are one id and "\ud800" and "\udfff" are two; a number by
// its digits ("-0" is 0). A string never has the key of a number.
func IDKey(val []byte) (string, bool) {
	switch Kind(val) {
	case '"':
		if end, fail := scanString(val, 0, false); fail != "" || end != len(val) {
			return "", false
		}
		return "s" + string(appendCanonicalString(nil, val[1:len(val)-1])), true
	case '0':
		digits := val
		neg := digits[0] == '-'
		if neg {
			digits = digits[1:]
		}
		if len(digits) == 0 || len(digits) > 16 || (digits[0] == '0' && len(digits) > 1) {
			return "", false
		}
		var n int64
		for _, c := range digits {
			if !isDigit(c) {
				return "", false // a fraction or an exponent
			}
			n = n*10 + int64(c-'0')
		}
		if n > MaxSafeInteger {
			return "", false
		}
		if neg && n != 0 {
			return "i-" + string(digits), true
		}
		return "i" + string(digits), true
	}
	return "", false
}

// IsID reports whether a raw value is an id MCP allows on a request (see
// IDKey).
func IsID(val []byte) bool {
	_, ok := IDKey(val)
	return ok
}

// SameID reports whether two raw ids are one id (see IDKey); an id that
// is not allowed is the same as nothing.
func SameID(a, b []byte) bool {
	ka, ok := IDKey(a)
	if !ok {
		return false
	}
	kb, ok := IDKey(b)
	return ok && ka == kb
}

// PeekID reads the id of a message that could not be read whole: one
// that is too deep (see Check), or not JSON past some point. It walks the
// top-level object's members in order and stops at the first that is not
// well-formed; id is the value of the one "id" member seen before that
// point (raw, allowed by IDKey). ok is false when there is none, when
// there were two, or when the id is not an allowed one: the message then
// gets its error with a null id, as JSON-RPC says.
func PeekID(b []byte) (id []byte, ok bool) {
	i := SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = SkipSpace(b, i+1)
	for i < len(b) && b[i] == '"' {
		ks := i
		var kok bool
		if i, kok = memberKey(b, i); !kok {
			break
		}
		key := b[ks+1 : skipStringEnd(b, ks)]
		vs := i
		end, st := scanValue(b, i)
		if st == Invalid {
			break
		}
		if KeyIs(key, "id") {
			if id != nil {
				return nil, false
			}
			id = b[vs:end]
		}
		i = SkipSpace(b, end)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = SkipSpace(b, i+1)
	}
	if id == nil || !IsID(id) {
		return nil, false
	}
	return id, true
}

// skipStringEnd is the index of the closing quote of the (valid) string
// starting at b[i].
func skipStringEnd(b []byte, i int) int { return skipString(b, i) - 1 }
