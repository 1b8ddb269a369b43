package rawjson

import "github.com/toolwarden/toolwarden/internal/policy"

// MaxDepth bounds nesting, as encoding/json does: 10000 nested arrays and
// objects are accepted, one more is not. mcp-go decodes the messages it
// serves with encoding/json, so a message past the limit is refused by
// every Go reader on the proxy's path, and must be refused the same way by
// the raw readers.
const MaxDepth = 10000

// Status is what Check found.
type Status uint8

const (
	// OK: exactly one JSON value, nested at most MaxDepth deep.
	OK Status = iota
	// TooDeep: well-formed JSON nested deeper than MaxDepth. Members,
	// Elements and ReadMessage still read it (they do not recurse), so
	// the id of a request that is too deep can be read and answered.
	TooDeep
	// Invalid: not JSON.
	Invalid
)

// Valid reports whether b is exactly one JSON value, optionally surrounded
// by whitespace, nested at most MaxDepth deep. It accepts what json.Valid
// accepts.
func Valid(b []byte) bool { return Check(b) == OK }

// rules are policy.ValidateJSON's rules for messages: encoding/json's
// grammar and depth. The strict rules (no key twice, valid UTF-8, no lone
// surrogate) are the proxy's to apply where it reads, not here.
var rules = policy.JSONRules{MaxDepth: MaxDepth}

// Check validates b as Valid does and tells a message that is only too
// deep from one that is not JSON at all. It never recurses, so no input
// can exhaust the stack; the cost is one pass over b.
func Check(b []byte) Status { return status(policy.ValidateJSON(b, rules)) }

// scanValue validates the value starting at b[i] (whitespace skipped) and
// returns the index just past it, as Check does.
func scanValue(b []byte, i int) (int, Status) {
	end, err := policy.ValidateJSONValue(b, i, rules)
	return end, status(err)
}

func status(err error) Status {
	if err == nil {
		return OK
	}
	if e, ok := err.(*policy.JSONError); ok && e.TooDeep {
		return TooDeep
	}
	return Invalid
}

// memberKey validates `"key" :` at b[i] and returns the index of the
// member's value (whitespace skipped).
func memberKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	i, ok := validString(b, i)
	if !ok {
		return 0, false
	}
	i = skipWS(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return skipWS(b, i+1), true
}

func skipWS(b []byte, i int) int {
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
