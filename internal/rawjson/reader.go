package rawjson

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// Reader is a pull reader for small documents read once into Go values,
// such as the output of plugins. It validates as it goes (RFC 8259's
// grammar, nesting capped), hands out string contents without copying
// unless they hold escapes, and never builds a tree. Strings decode as
// encoding/json decodes them, except that bytes that are not UTF-8 are
// kept as they are (so that a caller can refuse them by name).
//
//	r := rawjson.NewReader(doc, 64)
//	more, err := r.BeginObject()
//	for err == nil && more {
//		k, _ := r.Key()
//		... read or SkipValue the value ...
//		more, err = r.More('}')
//	}
type Reader struct {
	b               []byte
	i               int
	depth, maxDepth int
	scratch         []byte
}

// NewReader reads doc, refusing arrays and objects nested deeper than
// maxDepth.
func NewReader(doc []byte, maxDepth int) Reader {
	return Reader{b: doc, maxDepth: maxDepth}
}

// ReadError is where and why a Reader refused its document.
type ReadError struct {
	Msg    string
	Offset int
}

func (e *ReadError) Error() string { return e.Msg + " at offset " + strconv.Itoa(e.Offset) }

// Fail is a *ReadError for msg at the reader's position.
func (r *Reader) Fail(msg string) error { return &ReadError{Msg: msg, Offset: r.i} }

// Peek returns the next byte that is not white space, or 0 at the end.
func (r *Reader) Peek() byte {
	r.i = SkipSpace(r.b, r.i)
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// End checks that only white space is left.
func (r *Reader) End() error {
	if r.i = SkipSpace(r.b, r.i); r.i != len(r.b) {
		return r.Fail("unexpected data after the JSON value")
	}
	return nil
}

func (r *Reader) expect(c byte) error {
	if r.Peek() != c {
		return r.Fail("expected '" + string(c) + "'")
	}
	r.i++
	return nil
}

// SkipValue reads and validates any value. It recurses, at most maxDepth
// deep.
func (r *Reader) SkipValue() error {
	switch c := r.Peek(); c {
	case '{':
		more, err := r.BeginObject()
		for err == nil && more {
			if _, err = r.Key(); err == nil {
				err = r.SkipValue()
			}
			if err == nil {
				more, err = r.More('}')
			}
		}
		return err
	case '[':
		more, err := r.BeginArray()
		for err == nil && more {
			if err = r.SkipValue(); err == nil {
				more, err = r.More(']')
			}
		}
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
		return r.Fail("unexpected end of JSON")
	default:
		if c == '-' || isDigit(c) {
			end, fail := scanNumber(r.b, r.i)
			r.i = end
			if fail != "" {
				return r.Fail("invalid number")
			}
			return nil
		}
		return r.Fail("invalid character " + strconv.QuoteRune(rune(c)))
	}
}

// BeginObject reads '{' and reports whether a member follows.
func (r *Reader) BeginObject() (bool, error) { return r.begin('{', '}') }

// BeginArray reads '[' and reports whether an element follows.
func (r *Reader) BeginArray() (bool, error) { return r.begin('[', ']') }

func (r *Reader) begin(open, closing byte) (bool, error) {
	if err := r.expect(open); err != nil {
		return false, err
	}
	r.depth++
	if r.depth > r.maxDepth {
		return false, r.Fail("JSON nested too deeply")
	}
	if r.Peek() == closing {
		r.i++
		r.depth--
		return false, nil
	}
	return true, nil
}

// More reads the ',' (true) or the closing bracket (false) after a member
// or an element.
func (r *Reader) More(closing byte) (bool, error) {
	switch r.Peek() {
	case ',':
		r.i++
		return true, nil
	case closing:
		r.i++
		r.depth--
		return false, nil
	}
	return false, r.Fail("expected ',' or '" + string(closing) + "'")
}

// Key reads a member's name and its colon. The bytes are valid until the
// next string is read.
func (r *Reader) Key() ([]byte, error) {
	if r.Peek() != '"' {
		return nil, r.Fail("expected a member name")
	}
	k, err := r.str(true)
	if err != nil {
		return nil, err
	}
	return k, r.expect(':')
}

// Str reads a string value, decoded. The bytes are valid until the next
// string is read.
func (r *Reader) Str() ([]byte, error) {
	if r.Peek() != '"' {
		return nil, r.Fail("expected a string")
	}
	return r.str(true)
}

// StringValue reads a string value into a Go string.
func (r *Reader) StringValue() (string, error) {
	s, err := r.Str()
	return string(s), err
}

// BoolValue reads true or false.
func (r *Reader) BoolValue() (bool, error) {
	switch r.Peek() {
	case 't':
		return true, r.literal("true")
	case 'f':
		return false, r.literal("false")
	}
	return false, r.Fail("expected true or false")
}

// Null reads a null if one is next, and reports whether it did.
func (r *Reader) Null() bool {
	return r.Peek() == 'n' && r.literal("null") == nil
}

func (r *Reader) literal(lit string) error {
	end, fail := literal(r.b, r.i, lit)
	if fail != "" {
		return r.Fail("invalid literal")
	}
	r.i = end
	return nil
}

// str reads the string at r.i. With decode, it returns its content: a
// slice of the document when it has no escape, else of r.scratch.
func (r *Reader) str(decode bool) ([]byte, error) {
	start := r.i
	if end := quickString(r.b, start, &plainLoose); end > 0 {
		r.i = end
		return r.b[start+1 : end-1], nil
	}
	end, fail := scanString(r.b, start, false)
	if fail != "" {
		return nil, r.stringFault(end, fail)
	}
	r.i = end
	if !decode {
		return nil, nil
	}
	// Bytes between escapes are kept as they are, UTF-8 or not.
	out, inner := r.scratch[:0], r.b[start+1:end-1]
	for {
		k := bytes.IndexByte(inner, '\\')
		if k < 0 {
			break
		}
		u, n := DecodeUnit(inner, k)
		out = utf8.AppendRune(append(out, inner[:k]...), u.R) // a lone surrogate becomes U+FFFD
		inner = inner[k+n:]
	}
	r.scratch = append(out, inner...)
	return r.scratch, nil
}

// stringFault words scanString's fault at b[at] as the reader always has:
// an escape's fault is placed past its backslash.
func (r *Reader) stringFault(at int, fail string) error {
	switch fail {
	case "unterminated escape":
		fail, at = "unterminated string", at+1
	case "bad \\u escape":
		fail, at = "invalid \\u escape", at+2
	case "bad escape":
		fail, at = "invalid escape", at+1
	}
	r.i = at
	return r.Fail(fail)
}
