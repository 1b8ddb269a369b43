package rawjson

// Check as it was before it shared one scanner with Validate,
// kept as the baseline that BenchmarkCheck measures against in the same
// run.

// baselineCheck is Check as it was and tells a message that is only too
// deep from one that is not JSON at all. It never recurses, so no input
// can exhaust the stack; the cost is one pass over b.
func baselineCheck(b []byte) Status {
	end, st := baselineScanValue(b, SkipSpace(b, 0))
	if st == Invalid || SkipSpace(b, end) != len(b) {
		return Invalid
	}
	return st
}

// baselineScanValue validates the value starting at b[i] and returns the index
// just past it. Nesting is tracked on an explicit stack (one byte per
// level: the bracket that closes it), so depth costs memory, not stack.
func baselineScanValue(b []byte, i int) (int, Status) {
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
			i = SkipSpace(b, i+1)
			if i < len(b) && b[i] == closer {
				i++
				break // an empty container is a whole value
			}
			stack = append(stack, closer)
			if closer == '}' {
				if i, ok = baselineMemberKey(b, i); !ok {
					return 0, Invalid
				}
			}
			continue
		case c == '"':
			if i, ok = baselineValidString(b, i); !ok {
				return 0, Invalid
			}
		case c == '-' || isDigit(c):
			if i, ok = baselineValidNumber(b, i); !ok {
				return 0, Invalid
			}
		case c == 't':
			if i, ok = baselineLiteral(b, i, "true"); !ok {
				return 0, Invalid
			}
		case c == 'f':
			if i, ok = baselineLiteral(b, i, "false"); !ok {
				return 0, Invalid
			}
		case c == 'n':
			if i, ok = baselineLiteral(b, i, "null"); !ok {
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
			i = SkipSpace(b, i)
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
			i = SkipSpace(b, i+1)
			if closer == '}' {
				if i, ok = baselineMemberKey(b, i); !ok {
					return 0, Invalid
				}
			}
			break
		}
	}
}

// baselineMemberKey validates `"key" :` at b[i] and returns the index of the
// member's value (whitespace skipped).
func baselineMemberKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	i, ok := baselineValidString(b, i)
	if !ok {
		return 0, false
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return SkipSpace(b, i+1), true
}

// baselineValidNumber validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func baselineValidNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) || !isDigit(b[i]) {
		return 0, false
	}
	if b[i] == '0' {
		i++
	} else {
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i, true
}
func baselineLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), true
	}
	return 0, false
}

// baselineValidString validates the string starting at the quote b[i].
func baselineValidString(b []byte, i int) (int, bool) {
	i++
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			if i+1 >= len(b) {
				return 0, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(b)-i < 6 {
					return 0, false
				}
				for _, h := range b[i+2 : i+6] {
					if _, ok := hex4([]byte{'0', '0', '0', h}, 0); !ok {
						return 0, false
					}
				}
				i += 6
			default:
				return 0, false
			}
		default:
			i++
		}
	}
	return 0, false
}
