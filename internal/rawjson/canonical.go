package rawjson

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"
)

// Canonical is one spelling per JSON value, for hashing: object keys
// sorted, no insignificant space, numbers as written, strings escaped one
// way. Two raw values have the same canonical form exactly when every
// reader that keeps strings whole (JavaScript's JSON.parse, Python's json)
// reads them as the same value, whatever their key order, spacing or
// escapes.
//
// Decoding into Go strings would not do: encoding/json turns every lone
// surrogate ("\ud800", "\udfff") and every invalid UTF-8 byte into U+FFFD,
// so values a JavaScript server tells apart would hash alike. Here a lone
// surrogate stays a \uXXXX escape and an invalid byte becomes \xHH (which
// no JSON text contains, so the form is for hashing, not parsing). For
// values without either, the form is byte for byte what encoding/json
// writes for the decoded value with SetEscapeHTML(false) and UseNumber.
//
// val must be valid JSON (see Check); a key twice in one object is an
// error, since readers disagree about which one counts.
func Canonical(val []byte) ([]byte, error) {
	switch Check(val) {
	case TooDeep:
		return nil, fmt.Errorf("nested deeper than %d", MaxDepth)
	case Invalid:
		return nil, errors.New("not valid JSON")
	}
	return appendCanonical(nil, bytes.TrimSpace(val))
}

type canonMember struct {
	sortKey, key, val []byte
}

func appendCanonical(dst, val []byte) ([]byte, error) {
	switch Kind(val) {
	case '"':
		return appendCanonicalString(dst, val[1:len(val)-1]), nil
	case '[':
		dst = append(dst, '[')
		n := 0
		var err error
		Elements(val, func(el []byte) bool {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst, err = appendCanonical(dst, el)
			return err == nil
		})
		return append(dst, ']'), err
	case '{':
		var ms []canonMember
		var err error
		Members(val, func(k, v []byte) bool {
			m := canonMember{key: appendCanonicalString(nil, k)}
			m.sortKey, _ = decodeString(k)
			if m.val, err = appendCanonical(nil, v); err != nil {
				return false
			}
			ms = append(ms, m)
			return true
		})
		if err != nil {
			return nil, err
		}
		// encoding/json sorts a map's keys by their decoded bytes; the
		// canonical spelling breaks the ties that decoding leaves.
		slices.SortFunc(ms, func(a, b canonMember) int {
			if c := bytes.Compare(a.sortKey, b.sortKey); c != 0 {
				return c
			}
			return bytes.Compare(a.key, b.key)
		})
		dst = append(dst, '{')
		for i, m := range ms {
			if i > 0 {
				if bytes.Equal(ms[i-1].key, m.key) {
					return nil, fmt.Errorf("key %s appears twice in one object", m.key)
				}
				dst = append(dst, ',')
			}
			dst = append(append(append(dst, m.key...), ':'), m.val...)
		}
		return append(dst, '}'), nil
	}
	return append(dst, val...), nil // a number as written, or a literal
}

const hexDigits = "0123456789abcdef"

// appendCanonicalString appends the canonical spelling (see Canonical) of
// the string whose raw content, between the quotes, is inner.
func appendCanonicalString(dst, inner []byte) []byte {
	dst = append(dst, '"')
	walkString(inner, func(u Unit) {
		switch {
		case u.Invalid:
			dst = append(dst, '\\', 'x', hexDigits[u.R>>4], hexDigits[u.R&0xF])
		case u.R >= 0xD800 && u.R < 0xE000:
			dst = append(dst, '\\', 'u', hexDigits[u.R>>12], hexDigits[u.R>>8&0xF], hexDigits[u.R>>4&0xF], hexDigits[u.R&0xF])
		default:
			dst = appendEscapedRune(dst, u.R)
		}
	})
	return append(dst, '"')
}

// appendEscapedRune writes a rune as encoding/json does without HTML
// escaping.
func appendEscapedRune(dst []byte, r rune) []byte {
	switch r {
	case '"', '\\':
		return append(dst, '\\', byte(r))
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	case '\u2028', '\u2029':
		return append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
	}
	if r < 0x20 {
		return append(dst, '\\', 'u', '0', '0', hexDigits[r>>4], hexDigits[r&0xF])
	}
	return utf8.AppendRune(dst, r)
}
