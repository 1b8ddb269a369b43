// Package rawjson is the one place where Go code of toolwarden scans JSON
// text. It holds:
//
//   - validation: Validate under Rules (a depth and, with Strict, what
//     readers disagree on: a key twice, keys that differ only in case,
//     invalid UTF-8, lone surrogates), and Check for JSON-RPC messages,
//     which tells a message that is only too deep from one that is not
//     JSON. Neither recurses: nesting lives on an explicit stack, so no
//     input can exhaust the goroutine stack.
//   - member walking over validated text: Iter and Skip, and on them
//     Members, Elements and ReadMessage, which hand out raw bytes and
//     positions without decoding; values the proxy relays (tool
//     arguments, tool results) are never decoded or re-encoded.
//   - reading small documents into Go values: Reader, a validating pull
//     reader (the plugin host reads guest output with it).
//   - strings and escapes: DecodeUnit, and Canonical, one spelling per
//     value for hashing.
//   - ids: IDKey, SameID, and PeekID for a message that cannot be read
//     whole.
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
//
// rawjson imports nothing of toolwarden's, so that every layer (policy,
// the plugin host, the proxy, approvals) can use it.
//
//	if rawjson.Check(msg) != rawjson.OK { ... }
//	m, _ := rawjson.ReadMessage(msg)
//	rawjson.Members(m.Params, func(k, v []byte) bool {
//		if rawjson.KeyIs(k, "name") { name, _ = rawjson.String(v) }
//		return true
//	})
package rawjson
