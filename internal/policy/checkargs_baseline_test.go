package policy

// The argument validator as it was before rawjson.Validate, kept as the
// baseline that BenchmarkCheckArguments measures against in the same run.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

func baselineCheckArguments(raw []byte) error {
	v := baselineArgValidator{b: raw}
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

type baselineArgValidator struct {
	b []byte
	i int
}

func (v *baselineArgValidator) errf(format string, a ...any) error {
	return fmt.Errorf("arguments: "+format+" (offset %d)", append(a, v.i)...)
}

func (v *baselineArgValidator) space() {
	for v.i < len(v.b) {
		switch v.b[v.i] {
		case ' ', '\t', '\n', '\r':
			v.i++
		default:
			return
		}
	}
}

func (v *baselineArgValidator) lit(s string) bool {
	if len(v.b)-v.i >= len(s) && string(v.b[v.i:v.i+len(s)]) == s {
		v.i += len(s)
		return true
	}
	return false
}

func (v *baselineArgValidator) value(depth int) error {
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
type baselineSpan struct {
	start, end int
	escaped    bool
}

func (v *baselineArgValidator) object(depth int) error {
	v.i++ // {
	// Keys are compared pairwise while there are few (no allocation), then
	// through a map by their case-folded form, so that an object with many
	// keys costs linear time, not quadratic.
	var inline [16]baselineSpan
	keys := inline[:0]
	var folded map[string]baselineSpan
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
		k := baselineSpan{start, end, escaped}
		if folded == nil && len(keys) < len(inline) {
			for _, o := range keys {
				if bytes.EqualFold(v.keyBytes(o), v.keyBytes(k)) {
					return v.clash(o, k)
				}
			}
			keys = append(keys, k)
		} else {
			if folded == nil {
				folded = make(map[string]baselineSpan, 2*len(keys))
				for _, o := range keys {
					folded[baselineFoldKey(v.keyText(o))] = o
				}
			}
			fk := baselineFoldKey(v.keyText(k))
			if o, dup := folded[fk]; dup {
				return v.clash(o, k)
			}
			folded[fk] = k
		}
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

// clash is the error for two keys of one object that readers could take
// for one: the same key, or keys that differ only in case.
func (v *baselineArgValidator) clash(a, b baselineSpan) error {
	ka, kb := v.keyText(a), v.keyText(b)
	if ka == kb {
		return v.errf("key %s appears twice in one object", strconv.Quote(kb))
	}
	return v.errf("keys %s and %s differ only in case (readers that fold case, such as Go's encoding/json, take one for the other)", strconv.Quote(ka), strconv.Quote(kb))
}

// baselineFoldKey maps every rune of s to the least of its case-folding orbit, so
// that two keys fold to one exactly when bytes.EqualFold says they are
// equal.
func baselineFoldKey(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// keyBytes is keyText without a copy for a key without escapes.
func (v *baselineArgValidator) keyBytes(k baselineSpan) []byte {
	if !k.escaped {
		return v.b[k.start:k.end]
	}
	return []byte(v.keyText(k))
}

func (v *baselineArgValidator) keyText(k baselineSpan) string {
	if !k.escaped {
		return string(v.b[k.start:k.end])
	}
	// str refused lone surrogates and invalid UTF-8, so decoding loses
	// nothing here.
	var s string
	if json.Unmarshal(v.b[k.start-1:k.end+1], &s) != nil {
		return string(v.b[k.start:k.end])
	}
	return s
}

// str scans a string starting at its opening quote and returns whether it
// has escapes and the index of its closing quote.
func (v *baselineArgValidator) str() (escaped bool, end int, err error) {
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
				u, ok := v.hex4(v.i + 2)
				if !ok {
					return false, 0, v.errf("bad \\u escape")
				}
				if u >= 0xD800 && u < 0xE000 {
					// Only a high surrogate followed at once by a low one
					// is a character; anything else is a lone surrogate.
					lo, ok := v.hex4(v.i + 8)
					if u >= 0xDC00 || !ok || v.b[v.i+6] != '\\' || v.b[v.i+7] != 'u' || lo < 0xDC00 || lo >= 0xE000 {
						return false, 0, v.errf("lone surrogate \\u%04x in a string (readers disagree on it: Go reads U+FFFD, JavaScript keeps it)", u)
					}
					v.i += 6
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

// hex4 reads the four hex digits at b[i:], or ok false.
func (v *baselineArgValidator) hex4(i int) (r rune, ok bool) {
	if i+4 > len(v.b) {
		return 0, false
	}
	for _, h := range v.b[i : i+4] {
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

func (v *baselineArgValidator) number() error {
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
