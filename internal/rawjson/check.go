package rawjson

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

// Check validates b as Valid does and tells a message that is only too
// deep from one that is not JSON at all. It never recurses, so no input
// can exhaust the stack; the cost is one pass over b.
func Check(b []byte) Status {
	end, e := scanLoose(b, 0, MaxDepth)
	if e != nil && !e.TooDeep || SkipSpace(b, end) != len(b) {
		return Invalid
	}
	if e != nil {
		return TooDeep
	}
	return OK
}

// scanValue validates the value starting at b[i] (whitespace skipped) and
// returns the index just past it, as Check does.
func scanValue(b []byte, i int) (int, Status) {
	end, e := scanLoose(b, i, MaxDepth)
	switch {
	case e == nil:
		return end, OK
	case e.TooDeep:
		return end, TooDeep
	}
	return end, Invalid
}

// memberKey validates `"key" :` at b[i] and returns the index of the
// member's value (whitespace skipped).
func memberKey(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	i, fail := scanString(b, i, false)
	if fail != "" {
		return 0, false
	}
	i = SkipSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return 0, false
	}
	return SkipSpace(b, i+1), true
}
