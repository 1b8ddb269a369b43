package rawjson

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rules says what Validate accepts beyond the grammar of RFC 8259.
type Rules struct {
	// MaxDepth bounds nesting: MaxDepth nested arrays and objects are
	// accepted, one more is too deep (encoding/json's limit is 10000).
	MaxDepth int
	// Strict refuses what readers disagree on (policy.CheckArguments says
	// how): a key twice in one object, two keys of one object that differ
	// only in case, invalid UTF-8, and lone surrogate escapes. Keys are
	// compared after unescaping. Without Strict, Validate accepts
	// what json.Valid accepts, up to MaxDepth.
	Strict bool
}

// Error is why Validate refused a document.
type Error struct {
	// Offset is the byte of the document where the fault was found.
	Offset int
	// TooDeep: the document is well-formed (and, with Strict, keeps the
	// rules up to MaxDepth) and only nested too deep; Offset is where the
	// first container past MaxDepth opens. A reader that does not recurse
	// can still read such a document, for example to answer it by id.
	TooDeep bool
	// Msg says what is wrong, without the offset.
	Msg string
}

func (e *Error) Error() string { return e.Msg + " (offset " + strconv.Itoa(e.Offset) + ")" }

// Validate checks that b is exactly one JSON value, optionally
// surrounded by white space, under rules. It returns nil or a *Error.
//
// It never recurses: nesting is tracked on an explicit stack (one byte per
// level, plus the keys of open objects in Strict mode), so no input can
// exhaust the goroutine stack, and it scans past MaxDepth to tell a
// document that is only too deep from one that is not JSON. The cost is
// one pass over b.
func Validate(b []byte, rules Rules) error {
	end, e := scanJSON(b, 0, rules)
	if e != nil && !e.TooDeep {
		return e
	}
	if j := SkipSpace(b, end); j != len(b) {
		return &Error{Offset: j, Msg: "unexpected data after the JSON value"}
	}
	if e != nil {
		return e
	}
	return nil
}

// ValidateValue checks the one JSON value that starts at b[i] (after
// white space) as Validate does, and returns the index just past it;
// what follows the value is not looked at. end is valid when err is nil
// or a TooDeep *Error. Offsets are indexes into b.
func ValidateValue(b []byte, i int, rules Rules) (end int, err error) {
	end, e := scanJSON(b, i, rules)
	if e != nil {
		return end, e
	}
	return end, nil
}

// keySpan is one key of an open object: its bytes after unescaping (a
// slice of the document when it has no escape).
type keySpan []byte

// objFrame is an open object in Strict mode. Its keys are keys[keyStart:]
// while it has few (compared pairwise, no allocation), then folded, a map
// by case-folded form, so that an object with many keys costs linear
// time, not quadratic.
type objFrame struct {
	keyStart int
	folded   map[string]keySpan
}

// pairwiseKeys is how many keys of one object are compared pairwise
// before they go into a map.
const pairwiseKeys = 16

// addFolded is the map side of a key set: it moves the object's keys
// from keys into f.folded the first time, then records k there, or
// returns the key it clashes with.
func addFolded(f *objFrame, keys []keySpan, k keySpan) (_ []keySpan, clash keySpan, ok bool) {
	if f.folded == nil {
		f.folded = make(map[string]keySpan, 2*pairwiseKeys)
		for _, o := range keys[f.keyStart:] {
			f.folded[foldKey(string(o))] = o
		}
		keys = keys[:f.keyStart]
	}
	fk := foldKey(string(k))
	if o, dup := f.folded[fk]; dup {
		return keys, o, false
	}
	f.folded[fk] = k
	return keys, nil, true
}

// scanJSON validates the value starting at b[i] (after white space) and
// returns the index just past it. A TooDeep error is only returned once
// the whole value has been read, so its end is valid.
//
// The grammar is walked by two loops over the same token readers: the
// strict one carries the key sets of open objects, the loose one carries
// nothing but the stack of brackets, so that the check the proxy runs on
// every message pays nothing for rules it does not ask for.
func scanJSON(b []byte, i int, rules Rules) (int, *Error) {
	if rules.Strict {
		return scanStrict(b, i, rules.MaxDepth)
	}
	return scanLoose(b, i, rules.MaxDepth)
}

// scanLoose is scanJSON without Strict. Nesting is tracked on an explicit
// stack, one byte per level (the bracket that closes it), so depth costs
// memory, not goroutine stack.
func scanLoose(b []byte, i, maxDepth int) (int, *Error) {
	var closersInline [64]byte
	closers := closersInline[:0]
	tooDeep := -1
	var fail string
	i = SkipSpace(b, i)
	for {
		// A value starts at b[i] (white space skipped).
		if i >= len(b) {
			return i, &Error{Offset: i, Msg: "unexpected end"}
		}
		if c := b[i]; c == '{' || c == '[' {
			if len(closers) >= maxDepth && tooDeep < 0 {
				tooDeep = i
			}
			closer := c + 2 // '{'+2 is '}', '['+2 is ']'
			i = SkipSpace(b, i+1)
			if i >= len(b) || b[i] != closer {
				closers = append(closers, closer)
				if closer == '}' {
					if i, fail = member(b, i); fail != "" {
						return i, failAt(b, i, fail)
					}
				}
				continue
			}
			i++ // an empty container is a whole value
		} else if i, fail = scalar(b, i, false); fail != "" {
			return i, failAt(b, i, fail)
		}
		// A value ended at i: close containers until the next value starts.
		for {
			if len(closers) == 0 {
				return i, tooDeepError(tooDeep, maxDepth)
			}
			i = SkipSpace(b, i)
			closer := closers[len(closers)-1]
			if i >= len(b) || b[i] != closer && b[i] != ',' {
				return i, unexpected(b, i, closer)
			}
			if b[i] == closer {
				closers = closers[:len(closers)-1]
				i++
				continue
			}
			i = SkipSpace(b, i+1)
			if closer == '}' {
				if i, fail = member(b, i); fail != "" {
					return i, failAt(b, i, fail)
				}
			}
			break
		}
	}
}

// scanStrict is scanJSON with Strict: scanLoose's walk, plus the keys of
// the open objects within maxDepth, innermost last: objs[j]'s are
// keys[objs[j].keyStart:] up to the next object's, or in objs[j].folded
// once it has many. Objects past maxDepth keep no keys, so that a deep
// document still costs one byte a level.
func scanStrict(b []byte, i, maxDepth int) (int, *Error) {
	var closersInline [64]byte
	closers := closersInline[:0]
	var keysInline [pairwiseKeys]keySpan
	var objsInline [4]objFrame
	keys, objs := keysInline[:0], objsInline[:0]
	tooDeep := -1
	var fail string
	i = SkipSpace(b, i)
	for {
		// A value starts at b[i] (white space skipped).
		if i >= len(b) {
			return i, &Error{Offset: i, Msg: "unexpected end"}
		}
		if c := b[i]; c == '{' || c == '[' {
			if len(closers) >= maxDepth && tooDeep < 0 {
				tooDeep = i
			}
			closer := c + 2 // '{'+2 is '}', '['+2 is ']'
			i = SkipSpace(b, i+1)
			if i >= len(b) || b[i] != closer {
				closers = append(closers, closer)
				if closer == '}' {
					tracked := len(closers) <= maxDepth
					if tracked {
						objs = append(objs, objFrame{keyStart: len(keys)})
					}
					if i, keys, fail = strictMember(b, i, tracked, keys, objs); fail != "" {
						return i, failAt(b, i, fail)
					}
				}
				continue
			}
			i++ // an empty container is a whole value
		} else if i, fail = scalar(b, i, true); fail != "" {
			return i, failAt(b, i, fail)
		}
		// A value ended at i: close containers until the next value starts.
		for {
			if len(closers) == 0 {
				return i, tooDeepError(tooDeep, maxDepth)
			}
			i = SkipSpace(b, i)
			closer := closers[len(closers)-1]
			if i >= len(b) || b[i] != closer && b[i] != ',' {
				return i, unexpected(b, i, closer)
			}
			if b[i] == closer {
				if closer == '}' && len(closers) <= maxDepth {
					keys = keys[:objs[len(objs)-1].keyStart]
					objs = objs[:len(objs)-1]
				}
				closers = closers[:len(closers)-1]
				i++
				continue
			}
			i = SkipSpace(b, i+1)
			if closer == '}' {
				if i, keys, fail = strictMember(b, i, len(closers) <= maxDepth, keys, objs); fail != "" {
					return i, failAt(b, i, fail)
				}
			}
			break
		}
	}
}

// scalar validates the string, number or literal at b[i] and returns the
// index just past it, or where it fails and why.
func scalar(b []byte, i int, strict bool) (int, string) {
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i, strict)
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return i, "invalid value"
}

// tooDeepError is the result of a well-formed value whose first
// container past maxDepth opens at tooDeep (nil when there is none).
func tooDeepError(tooDeep, maxDepth int) *Error {
	if tooDeep < 0 {
		return nil
	}
	return &Error{Offset: tooDeep, TooDeep: true, Msg: fmt.Sprintf("nested deeper than %d", maxDepth)}
}

// unexpected is the error for b[i] (or the end) where a container
// closed by closer wants a comma or its end.
func unexpected(b []byte, i int, closer byte) *Error {
	if i >= len(b) {
		return &Error{Offset: i, Msg: "unexpected end in " + containerName(closer)}
	}
	return &Error{Offset: i, Msg: "expected , or " + string(closer) + " in " + containerName(closer)}
}

func containerName(closer byte) string {
	if closer == '}' {
		return "object"
	}
	return "array"
}

// failLoneSurrogate is the fault that failAt spells out with the escape
// found at the offset; the others are whole messages.
const failLoneSurrogate = "lone surrogate"

// failAt builds the error for fail at b[i].
func failAt(b []byte, i int, fail string) *Error {
	if fail == failLoneSurrogate {
		return &Error{Offset: i, Msg: fmt.Sprintf("lone surrogate \\u%s in a string (readers disagree on it: Go reads U+FFFD, JavaScript keeps it)", bytes.ToLower(b[i+2:i+6]))}
	}
	return &Error{Offset: i, Msg: fail}
}

// member reads `"key" :` at b[i] and returns the index of the member's
// value (white space skipped), or where it fails and why.
func member(b []byte, i int) (int, string) {
	if i >= len(b) || b[i] != '"' {
		return i, "expected a key"
	}
	if j := quickString(b, i, &plainLoose); j > 0 {
		i = j
	} else {
		var fail string
		if i, fail = scanString(b, i, false); fail != "" {
			return i, fail
		}
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, "expected :"
	}
	return SkipSpace(b, i+1), ""
}

// strictMember is member in Strict mode. tracked says the key goes into
// the innermost object of objs, where a clash is a fault (reported at
// the key); keys is returned with it.
func strictMember(b []byte, i int, tracked bool, keys []keySpan, objs []objFrame) (int, []keySpan, string) {
	if i >= len(b) || b[i] != '"' {
		return i, keys, "expected a key"
	}
	start := i
	i, fail := scanString(b, i, true)
	if fail != "" {
		return i, keys, fail
	}
	if tracked {
		k := keySpan(b[start+1 : i-1])
		if bytes.IndexByte(k, '\\') >= 0 {
			// scanString refused lone surrogates and invalid UTF-8, so
			// unescaping loses nothing.
			if d, ok := decodeString(k); ok {
				k = keySpan(d)
			}
		}
		f := &objs[len(objs)-1]
		if f.folded == nil && len(keys)-f.keyStart < pairwiseKeys {
			for _, o := range keys[f.keyStart:] {
				if bytes.EqualFold(o, k) {
					return start, keys, clashMessage(o, k)
				}
			}
			keys = append(keys, k)
		} else {
			var clash keySpan
			var ok bool
			if keys, clash, ok = addFolded(f, keys, k); !ok {
				return start, keys, clashMessage(clash, k)
			}
		}
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return i, keys, "expected :"
	}
	return SkipSpace(b, i+1), keys, ""
}

// foldKey maps every rune of s to the least of its case-folding orbit, so
// that two keys fold to one exactly when bytes.EqualFold says they are
// equal.
func foldKey(s string) string {
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

// clashMessage says why two keys of one object are refused: readers
// could take them for one.
func clashMessage(a, b keySpan) string {
	if bytes.Equal(a, b) {
		return "key " + strconv.Quote(string(b)) + " appears twice in one object"
	}
	return "keys " + strconv.Quote(string(a)) + " and " + strconv.Quote(string(b)) + " differ only in case (readers that fold case, such as Go's encoding/json, take one for the other)"
}

// scanString validates the string whose opening quote is b[i] and
// returns the index just past its closing quote, or where it fails and
// why. Strict also refuses invalid UTF-8 and lone surrogate escapes.
func scanString(b []byte, i int, strict bool) (int, string) {
	plain := &plainLoose
	if strict {
		plain = &plainStrict
	}
	i++
	for i < len(b) {
		// Most bytes need no look: skip them a table lookup each.
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		c := b[i]
		switch {
		case c == '"':
			return i + 1, ""
		case c == '\\':
			var why string
			if i, why = scanEscape(b, i, strict); why != "" {
				return i, why
			}
		case c < 0x20:
			return i, "control character in string"
		case c < utf8.RuneSelf || !strict:
			i++
		default:
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size <= 1 {
				return i, "invalid UTF-8"
			}
			i += size
		}
	}
	return i, "unterminated string"
}

// scanEscape validates the escape whose backslash is b[i] and returns the
// index just past it, or where it fails and why. Strict also refuses a
// lone surrogate escape: only a high surrogate followed at once by a low
// one is a character.
func scanEscape(b []byte, i int, strict bool) (int, string) {
	if i+1 >= len(b) {
		return i, "unterminated escape"
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2, ""
	case 'u':
		u, ok := hex4(b, i+2)
		if !ok {
			return i, "bad \\u escape"
		}
		if strict && u >= 0xD800 && u < 0xE000 {
			lo, ok := hex4(b, i+8)
			if u >= 0xDC00 || !ok || b[i+6] != '\\' || b[i+7] != 'u' || lo < 0xDC00 || lo >= 0xE000 {
				return i, failLoneSurrogate
			}
			return i + 12, ""
		}
		return i + 6, ""
	}
	return i, "bad escape"
}

// quickString returns the index just past the string whose opening quote
// is b[i] when it is all plain bytes (most keys and many values), else 0:
// scanString then reads it.
func quickString(b []byte, i int, plain *[256]bool) int {
	j := i + 1
	for j < len(b) && plain[b[j]] {
		j++
	}
	if j < len(b) && b[j] == '"' {
		return j + 1
	}
	return 0
}

// plainLoose and plainStrict are the bytes of a string that need no
// look of their own: not a quote, a backslash or a control character,
// and, in Strict mode, ASCII (the rest is checked as UTF-8).
var plainLoose, plainStrict = plainBytes(false), plainBytes(true)

func plainBytes(strict bool) (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\' && (c < utf8.RuneSelf || !strict)
	}
	return t
}

// scanNumber validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at
// b[i].
func scanNumber(b []byte, i int) (int, string) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) || !isDigit(b[i]) {
		return i, "bad number"
	}
	if b[i] == '0' {
		i++
	} else {
		i = skipDigits(b, i)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return i, "bad number"
		}
		i = skipDigits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return i, "bad number"
		}
		i = skipDigits(b, i)
	}
	return i, ""
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func skipDigits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

func literal(b []byte, i int, lit string) (int, string) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), ""
	}
	return i, "invalid value"
}

// SkipSpace returns the index of the first byte at or after b[i] that is
// not JSON white space (space, tab, newline, carriage return).
func SkipSpace(b []byte, i int) int {
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
