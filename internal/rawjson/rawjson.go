// Package rawjson reads the few fields the proxy needs from JSON-RPC
// messages without decoding them: one strict validation pass over a
// message (Check, which never recurses), then cheap walks over the members
// of the objects it needs, handing out the raw bytes of each value. Values
// the proxy relays (tool arguments, tool results) are never decoded or
// re-encoded.
//
// Keys match exactly, after unescaping ("n\u0061me" is "name", "NAME" is
// not), as the JavaScript and Python SDKs read them. encoding/json folds
// case when it matches a struct field; KeyFolds finds the keys on which the
// two readings differ, so that a message carrying one can be refused
// before any reader disagrees about it.
//
// Strings are compared and hashed without the lossy step of decoding them
// into Go strings (which turns every lone surrogate and invalid byte into
// U+FFFD): see Canonical and IDKey.
package rawjson

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
	"unsafe"
)

// skip returns the index just past the value at b[i], which must be valid
// JSON: it only follows strings and brackets.
func skip(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

func skipString(b []byte, i int) int {
	i++
	for i < len(b) {
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			i += 2
			continue
		}
		i++
	}
	return i
}

// Members calls fn with the key and the raw value of each member of the
// object obj, in order, until fn returns false. obj must be well-formed
// JSON (see Check; any depth: Members does not recurse); surrounding
// whitespace is allowed. The key is the raw
// content between the quotes (escapes not decoded: match it with KeyIs).
// Members reports whether obj is an object.
func Members(obj []byte, fn func(key, val []byte) bool) bool {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = SkipSpace(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		ks := i + 1
		i = skipString(obj, i)
		key := obj[ks : i-1]
		i = SkipSpace(obj, i)
		i = SkipSpace(obj, i+1) // past ':'
		vs := i
		i = skip(obj, i)
		if !fn(key, obj[vs:i]) {
			return true
		}
		i = SkipSpace(obj, i)
		if i < len(obj) && obj[i] == ',' {
			i = SkipSpace(obj, i+1)
		}
	}
	return true
}

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

// Elements calls fn with each element of the array arr, in order, until fn
// returns false. arr must be valid JSON. Elements reports whether arr is
// an array.
func Elements(arr []byte, fn func(val []byte) bool) bool {
	i := SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	i = SkipSpace(arr, i+1)
	for i < len(arr) && arr[i] != ']' {
		vs := i
		i = skip(arr, i)
		if !fn(arr[vs:i]) {
			return true
		}
		i = SkipSpace(arr, i)
		if i < len(arr) && arr[i] == ',' {
			i = SkipSpace(arr, i+1)
		}
	}
	return true
}

// KeyIs reports whether a raw key (as Members gives it) is field: the
// same characters once escapes are decoded, case included.
func KeyIs(key []byte, field string) bool {
	if bytes.IndexByte(key, '\\') < 0 {
		// A view of key, not a copy: nothing keeps it.
		return unsafe.String(unsafe.SliceData(key), len(key)) == field
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
