package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// CodeInvalidArguments is the reason code for arguments that are refused
// before any rule runs.
const CodeInvalidArguments = "invalid_arguments"

// maxArgDepth bounds nesting in call arguments.
const maxArgDepth = 256

// CheckArguments validates a call's raw arguments: a JSON object (or
// nothing), well-formed, valid UTF-8, nested at most maxArgDepth deep, and
// with no key twice in any object. Duplicate keys matter because readers
// disagree on them: a plugin that takes the first "path" and a server that
// takes the last would see different calls. Keys are compared after
// unescaping, so "a" and "\u0061" are the same key.
func CheckArguments(raw []byte) error {
	v := argValidator{b: raw}
	v.space()
	if v.i == len(v.b) {
		return nil // no arguments
	}
	if v.b[v.i] != '{' {
		if v.lit("null") {
			v.space()
			if v.i == len(v.b) {
				return nil
			}
		}
		return errors.New("arguments must be a JSON object")
	}
	if err := v.value(0); err != nil {
		return err
	}
	v.space()
	if v.i != len(v.b) {
		return v.errf("unexpected data after the arguments object")
	}
	return nil
}

type argValidator struct {
	b []byte
	i int
}

func (v *argValidator) errf(format string, a ...any) error {
	return fmt.Errorf("arguments: "+format+" (offset %d)", append(a, v.i)...)
}

func (v *argValidator) space() {
	for v.i < len(v.b) {
		switch v.b[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

func (v *argValidator) lit(s string) bool {
	if len(v.b)-v.i >= len(s) && string(v.b[v.i:v.i+len(s)]) == s {
		v.i += len(s)
		return true
	}
	return false
}

func (v *argValidator) value(depth int) error {
	if depth > maxArgDepth {
		return v.errf("nested deeper than %d", maxArgDepth)
	}
	v.space()
	if v.i >= len(v.b) {
		return v.errf("unexpected end")
	}
	switch c := v.b[v.i]; {
	case c == '{':
		return v.object(depth)
	case c == '[':
		v.i++
		v.space()
		if v.i < len(v.b) && v.b[v.i] == ']' {
			v.i++
			return nil
		}
		for {
			if err := v.value(depth + 1); err != nil {
				return err
			}
			v.space()
			if v.i >= len(v.b) {
				return v.errf("unexpected end in array")
			}
			if v.b[v.i] == ']' {
				v.i++
				return nil
			}
			if v.b[v.i] != ',' {
				return v.errf("expected , or ] in array")
			}
			v.i++
		}
	case c == '"':
		_, _, err := v.str()
		return err
	case c == 't':
		if v.lit("true") {
			return nil
		}
	case c == 'f':
		if v.lit("false") {
			return nil
		}
	case c == 'n':
		if v.lit("null") {
			return nil
		}
	case c == '-' || c >= '0' && c <= '9':
		return v.number()
	}
	return v.errf("invalid value")
}

// span is a key's raw bytes (between the quotes) and whether it has escapes.
type span struct {
	start, end int
	escaped    bool
}

func (v *argValidator) object(depth int) error {
	v.i++ // {
	var inline [16]span
	keys := inline[:0]
	v.space()
	if v.i < len(v.b) && v.b[v.i] == '}' {
		v.i++
		return nil
	}
	for {
		v.space()
		if v.i >= len(v.b) || v.b[v.i] != '"' {
			return v.errf("expected a key")
		}
		start := v.i + 1
		escaped, end, err := v.str()
		if err != nil {
			return err
		}
		k := span{start, end, escaped}
		for _, o := range keys {
			if v.sameKey(o, k) {
				return v.errf("key %s appears twice in one object", strconv.Quote(v.keyText(k)))
			}
		}
		keys = append(keys, k)
		v.space()
		if v.i >= len(v.b) || v.b[v.i] != ':' {
			return v.errf("expected :")
		}
		v.i++
		if err := v.value(depth + 1); err != nil {
			return err
		}
		v.space()
		if v.i >= len(v.b) {
			return v.errf("unexpected end in object")
		}
		if v.b[v.i] == '}' {
			v.i++
			return nil
		}
		if v.b[v.i] != ',' {
			return v.errf("expected , or } in object")
		}
		v.i++
	}
}

func (v *argValidator) sameKey(a, b span) bool {
	if !a.escaped && !b.escaped {
		return string(v.b[a.start:a.end]) == string(v.b[b.start:b.end])
	}
	return v.keyText(a) == v.keyText(b)
}

func (v *argValidator) keyText(k span) string {
	if !k.escaped {
		return string(v.b[k.start:k.end])
	}
	var s string
	if json.Unmarshal(v.b[k.start-1:k.end+1], &s) != nil {
		return string(v.b[k.start:k.end])
	}
	return s
}

// str scans a string starting at its opening quote and returns whether it
// has escapes and the index of its closing quote.
func (v *argValidator) str() (escaped bool, end int, err error) {
	v.i++
	for v.i < len(v.b) {
		c := v.b[v.i]
		switch {
		case c == '"':
			end = v.i
			v.i++
			return escaped, end, nil
		case c == '\\':
			escaped = true
			if v.i+1 >= len(v.b) {
				return false, 0, v.errf("unterminated escape")
			}
			switch v.b[v.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				v.i += 2
			case 'u':
				if v.i+6 > len(v.b) {
					return false, 0, v.errf("short \\u escape")
				}
				for _, h := range v.b[v.i+2 : v.i+6] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return false, 0, v.errf("bad \\u escape")
					}
				}
				v.i += 6
			default:
				return false, 0, v.errf("bad escape")
			}
		case c < 0x20:
			return false, 0, v.errf("control character in string")
		case c < utf8.RuneSelf:
			v.i++
		default:
			r, size := utf8.DecodeRune(v.b[v.i:])
			if r == utf8.RuneError && size <= 1 {
				return false, 0, v.errf("invalid UTF-8")
			}
			v.i += size
		}
	}
	return false, 0, v.errf("unterminated string")
}

func (v *argValidator) number() error {
	if v.b[v.i] == '-' {
		v.i++
	}
	digits := func() int {
		n := 0
		for v.i < len(v.b) && v.b[v.i] >= '0' && v.b[v.i] <= '9' {
			v.i++
			n++
		}
		return n
	}
	if v.i < len(v.b) && v.b[v.i] == '0' {
		v.i++
	} else if digits() == 0 {
		return v.errf("bad number")
	}
	if v.i < len(v.b) && v.b[v.i] == '.' {
		v.i++
		if digits() == 0 {
			return v.errf("bad number")
		}
	}
	if v.i < len(v.b) && (v.b[v.i] == 'e' || v.b[v.i] == 'E') {
		v.i++
		if v.i < len(v.b) && (v.b[v.i] == '+' || v.b[v.i] == '-') {
			v.i++
		}
		if digits() == 0 {
			return v.errf("bad number")
		}
	}
	return nil
}
