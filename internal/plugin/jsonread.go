package plugin

import (
	"errors"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// jreader is a small pull reader for the JSON documents plugins write. It
// validates as it goes (strict RFC 8259 grammar, nesting capped), returns
// string bytes without allocating unless they contain escapes, and never
// builds a tree.
type jreader struct {
	b       []byte
	i       int
	depth   int
	scratch []byte
}

const maxDepth = 256

type syntaxError struct {
	msg string
	off int
}

func (e *syntaxError) Error() string { return e.msg + " at offset " + strconv.Itoa(e.off) }

func (r *jreader) fail(msg string) error { return &syntaxError{msg: msg, off: r.i} }

func (r *jreader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (r *jreader) peek() byte {
	r.ws()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// end checks that only white space is left.
func (r *jreader) end() error {
	r.ws()
	if r.i != len(r.b) {
		return r.fail("unexpected data after the JSON value")
	}
	return nil
}

func (r *jreader) expect(c byte) error {
	if r.peek() != c {
		return r.fail("expected '" + string(c) + "'")
	}
	r.i++
	return nil
}

// skip reads and validates any value.
func (r *jreader) skip() error {
	switch c := r.peek(); c {
	case '{':
		more, err := r.beginObject()
		for err == nil && more {
			if _, err = r.key(); err != nil {
				break
			}
			if err = r.skip(); err != nil {
				break
			}
			more, err = r.more('}')
		}
		r.depth--
		return err
	case '[':
		more, err := r.beginArray()
		for err == nil && more {
			if err = r.skip(); err != nil {
				break
			}
			more, err = r.more(']')
		}
		r.depth--
		return err
	case '"':
		_, err := r.str(false)
		return err
	case 't':
		return r.literal("true")
	case 'f':
		return r.literal("false")
	case 'n':
		return r.literal("null")
	case 0:
		return r.fail("unexpected end of JSON")
	default:
		if c == '-' || c >= '0' && c <= '9' {
			return r.number()
		}
		return r.fail("invalid character " + strconv.QuoteRune(rune(c)))
	}
}

func (r *jreader) literal(lit string) error {
	if len(r.b)-r.i < len(lit) || string(r.b[r.i:r.i+len(lit)]) != lit {
		return r.fail("invalid literal")
	}
	r.i += len(lit)
	return nil
}

func (r *jreader) number() error {
	b, i := r.b, r.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		r.i = i
		return r.fail("invalid number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			r.i = i
			return r.fail("invalid number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			r.i = i
			return r.fail("invalid number")
		}
	}
	r.i = i
	return nil
}

// beginObject consumes '{' and reports whether a member follows.
func (r *jreader) beginObject() (bool, error) {
	if err := r.expect('{'); err != nil {
		return false, err
	}
	r.depth++
	if r.depth > maxDepth {
		return false, r.fail("JSON nested too deeply")
	}
	if r.peek() == '}' {
		r.i++
		return false, nil
	}
	return true, nil
}

// beginArray consumes '[' and reports whether an element follows.
func (r *jreader) beginArray() (bool, error) {
	if err := r.expect('['); err != nil {
		return false, err
	}
	r.depth++
	if r.depth > maxDepth {
		return false, r.fail("JSON nested too deeply")
	}
	if r.peek() == ']' {
		r.i++
		return false, nil
	}
	return true, nil
}

// more consumes ',' (true) or the closing byte (false) after a member.
func (r *jreader) more(closing byte) (bool, error) {
	switch r.peek() {
	case ',':
		r.i++
		return true, nil
	case closing:
		r.i++
		return false, nil
	}
	return false, r.fail("expected ',' or '" + string(closing) + "'")
}

// key reads a member name and its colon. The bytes are valid until the next
// string is read.
func (r *jreader) key() ([]byte, error) {
	if r.peek() != '"' {
		return nil, r.fail("expected a member name")
	}
	k, err := r.str(true)
	if err != nil {
		return nil, err
	}
	return k, r.expect(':')
}

// str reads a string at r.i. With decode, it returns its value: a slice of
// the input when there are no escapes, else of r.scratch.
func (r *jreader) str(decode bool) ([]byte, error) {
	r.i++ // opening quote
	start := r.i
	b := r.b
	for i := start; i < len(b); i++ {
		c := b[i]
		if c == '"' {
			r.i = i + 1
			return b[start:i], nil
		}
		if c == '\\' {
			r.i = i
			return r.strEscaped(start, decode)
		}
		if c < 0x20 {
			r.i = i
			return nil, r.fail("control character in string")
		}
	}
	r.i = len(b)
	return nil, r.fail("unterminated string")
}

func (r *jreader) strEscaped(start int, decode bool) ([]byte, error) {
	out := r.scratch[:0]
	if decode {
		out = append(out, r.b[start:r.i]...)
	}
	b := r.b
	i := r.i
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			r.i = i + 1
			r.scratch = out
			return out, nil
		case c < 0x20:
			r.i = i
			return nil, r.fail("control character in string")
		case c != '\\':
			if decode {
				out = append(out, c)
			}
			i++
			continue
		}
		if i+1 >= len(b) {
			break
		}
		e := b[i+1]
		i += 2
		var dec byte
		switch e {
		case '"', '\\', '/':
			dec = e
		case 'b':
			dec = '\b'
		case 'f':
			dec = '\f'
		case 'n':
			dec = '\n'
		case 'r':
			dec = '\r'
		case 't':
			dec = '\t'
		case 'u':
			r1, ok := hex4(b, i)
			if !ok {
				r.i = i
				return nil, r.fail("invalid \\u escape")
			}
			i += 4
			if utf16.IsSurrogate(r1) {
				if r2, ok := hex4(b, i+2); ok && i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
					if d := utf16.DecodeRune(r1, r2); d != utf8.RuneError {
						i += 6
						r1 = d
					} else {
						r1 = utf8.RuneError
					}
				} else {
					r1 = utf8.RuneError
				}
			}
			if decode {
				out = utf8.AppendRune(out, r1)
			}
			continue
		default:
			r.i = i - 1
			return nil, r.fail("invalid escape")
		}
		if decode {
			out = append(out, dec)
		}
	}
	r.i = len(b)
	return nil, r.fail("unterminated string")
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

// stringValue reads a string value (allocating its Go string).
func (r *jreader) stringValue() (string, error) {
	if r.peek() != '"' {
		return "", r.fail("expected a string")
	}
	s, err := r.str(true)
	return string(s), err
}

func (r *jreader) boolValue() (bool, error) {
	switch r.peek() {
	case 't':
		return true, r.literal("true")
	case 'f':
		return false, r.literal("false")
	}
	return false, r.fail("expected true or false")
}

// isNull consumes a null if one is next.
func (r *jreader) isNull() bool {
	if r.peek() == 'n' && r.literal("null") == nil {
		return true
	}
	return false
}

var errNotJSON = errors.New("not valid JSON")

// validJSON reports whether b is exactly one valid JSON value, nested no
// deeper than the reader reads (maxDepth).
func validJSON(b []byte) bool { return rawjson.Validate(b, outputRules) == nil }

var outputRules = rawjson.Rules{MaxDepth: maxDepth}
