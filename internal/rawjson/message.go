package rawjson

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Message is the top-level members of a JSON-RPC message, raw: nil when
// absent, and ID, Params and Error nil too when null.
type Message struct {
	ID, Method, Params, Result, Error []byte
}

// ReadMessage reads the JSON-RPC members of obj, which must be well-formed
// JSON (see Check; a message that is only too deep is read too); ok
// reports whether obj is an object. Keys match exactly (see KeyIs), a
// later duplicate winning.
func ReadMessage(obj []byte) (m Message, ok bool) {
	ok = Members(obj, func(k, v []byte) bool {
		switch {
		case KeyIs(k, "id"):
			m.ID = v
		case KeyIs(k, "method"):
			m.Method = v
		case KeyIs(k, "params"):
			m.Params = v
		case KeyIs(k, "result"):
			m.Result = v
		case KeyIs(k, "error"):
			m.Error = v
		}
		return true
	})
	if Kind(m.ID) == 'n' {
		m.ID = nil
	}
	if Kind(m.Params) == 'n' {
		m.Params = nil
	}
	if Kind(m.Error) == 'n' {
		m.Error = nil
	}
	return m, ok
}

// KeyIs reports whether a raw key (as Members gives it) is field: the
// same characters once escapes are decoded, case included.
func KeyIs(key []byte, field string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		return string(key) == field // compared in place: Go does not copy key
	}
	d, ok := decodeString(key)
	return ok && string(d) == field
}

// KeyFolds reports whether a raw key is field to encoding/json but not to
// an exact reader: equal to it under Unicode case folding (as encoding/json
// matches struct fields, and bytes.EqualFold compares) yet not the same.
// A message with such a key is read one way by mcp-go and another by the
// upstream.
func KeyFolds(key []byte, field string) bool {
	d := key
	if bytes.IndexByte(key, '\\') >= 0 {
		var ok bool
		if d, ok = decodeString(key); !ok {
			return false
		}
	}
	return string(d) != field && bytes.EqualFold(d, []byte(field))
}

// Kind is the type of a raw JSON value by its first byte: one of
// '{', '[', '"', 'n' (null), 't', 'f' (booleans) or '0' (a number).
func Kind(val []byte) byte {
	if len(val) == 0 {
		return 0
	}
	switch c := val[0]; c {
	case '{', '[', '"', 'n', 't', 'f':
		return c
	}
	return '0'
}

// String decodes a raw JSON value that must be a string or null (null is
// ""), as encoding/json decodes it into a Go string. ok is false for any
// other kind of value.
func String(val []byte) (s string, ok bool) {
	switch Kind(val) {
	case 'n':
		return "", true
	case '"':
	default:
		return "", false
	}
	inner := val[1 : len(val)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner), true
	}
	if json.Unmarshal(val, &s) != nil {
		return "", false
	}
	return s, true
}

// Bool decodes a raw JSON value that must be a boolean or null (null is
// false). ok is false for any other kind of value.
func Bool(val []byte) (v, ok bool) {
	switch Kind(val) {
	case 't':
		return true, true
	case 'f', 'n':
		return false, true
	}
	return false, false
}
