package rawjson

// MaxDepth bounds nesting, as encoding/json does: 10000 nested arrays and
// objects are accepted, one more is not. mcp-go decodes the messages it
// serves with encoding/json, so a message past the limit is refused by
// every Go reader on the proxy's path, and must be refused the same way by
// the raw readers.
const MaxDepth = 10000

// Status is what Check found.
type Status uint8

const (
	// OK: exactly one JSON value, nested at most MaxDepth deep.
	OK Status = iota
	// TooDeep: well-formed JSON nested deeper than MaxDepth. Members,
	// Elements and ReadMessage still read it (they do not recurse), so
	// the id of a request that is too deep can be read and answered.
	TooDeep
	// Invalid: not JSON.
	Invalid
)

// Valid reports whether b is exactly one JSON value, optionally surrounded
// by whitespace, nested at most MaxDepth deep. It accepts what json.Valid
// accepts.
func Valid(b []byte) bool { return Check(b) == OK }

// Check validates b as Valid does and tells a message that is only too
// deep from one that is not JSON at all. It never recurses, so no input
// can exhaust the stack; the cost is one pass over b.
func Check(b []byte) Status {
	end, st := scanValue(b, skipWS(b, 0))
	if st == Invalid || skipWS(b, end) != len(b) {
		return Invalid
	}
	return st
}

// scanValue validates the value starting at b[i] and returns the index
// just past it. Nesting is tracked on an explicit stack (one byte per
// level: the bracket that closes it), so depth costs memory, not stack.
func scanValue(b []byte, i int) (int, Status) {
	var inline [64]byte
	stack := inline[:0]
	st := OK
	var ok bool
	for {
		// A value starts at b[i] (whitespace skipped).
		if i >= len(b) {
			return 0, Invalid
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if len(stack) >= MaxDepth {
				st = TooDeep
			}
			closer := byte('}')
			if c == '[' {
				closer = ']'
			}
			i = skipWS(b, i+1)
			if i < len(b) && b[i] == closer {
				i++
				break // an empty container is a whole value
			}
			stack = append(stack, closer)
			if closer == '}' {
				if i, ok = memberKey(b, i); !ok {
					return 0, Invalid
				}
			}
			continue
		case c == '"':
			if i, ok = validString(b, i); !ok {
				return 0, Invalid
			}
		case c == '-' || isDigit(c):
			if i, ok = validNumber(b, i); !ok {
				return 0, Invalid
			}
		case c == 't':
			if i, ok = literal(b, i, "true"); !ok {
				return 0, Invalid
			}
		case c == 'f':
			if i, ok = literal(b, i, "false"); !ok {
				return 0, Invalid
			}
		case c == 'n':
			if i, ok = literal(b, i, "null"); !ok {
				return 0, Invalid
			}
		default:
			return 0, Invalid
		}
		// A value ended at i: close containers until the next value starts.
		for {
			if len(stack) == 0 {
				return i, st
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, Invalid
			}
			closer := stack[len(stack)-1]
			if b[i] == closer {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			if b[i] != ',' {
				return 0, Invalid
			}
			i = skipWS(b, i+1)
			if closer == '}' {
				if i, ok = memberKey(b, i); !ok {
					return 0, Invalid
				}
			}
			break
		}
	}
}

// memberKey validates `"key" :` at b[i] and returns the index of the
// member's value (whitespace skipped).
func memberKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	i, ok := validString(b, i)
	if !ok {
		return 0, false
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return skipWS(b, i+1), true
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
