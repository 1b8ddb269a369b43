package rawjson

import "bytes"

// The walkers below read JSON that has been validated (see Validate and
// Check): they follow quotes and brackets only, so they neither recurse
// nor look at a byte twice, and they hand out positions and raw bytes
// instead of decoded values.

// Skip returns the index just past the value that starts at b[i]. The
// value must be valid JSON; Skip only follows strings and brackets.
func Skip(b []byte, i int) int {
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

// skipString returns the index just past the valid string whose opening
// quote is b[i]. Most strings (keys, ids, names, lines of text) are
// short and are read byte by byte; past 64 bytes skipLong takes over.
func skipString(b []byte, i int) int {
	j := i + 1
	for end := min(len(b), i+64); j < end; j++ {
		switch b[j] {
		case '"':
			return j + 1
		case '\\':
			j++ // the escaped byte
		}
	}
	return skipLong(b, i, j)
}

// skipLong is skipString from b[j], a character's first byte: past the
// first quote not escaped by an odd run of backslashes. Finding quotes
// with bytes.IndexByte keeps long values (a file's content in a write)
// cheap to step over.
func skipLong(b []byte, i, j int) int {
	for j < len(b) {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
	return len(b)
}

// Iter walks the members of the object, or the elements of the array,
// that opens at b[open]; b must be valid JSON. Each step gives the
// member's key and where its value starts, as positions in b. A caller
// that reads the value through (to render it, say) tells Iter where it
// ended with Resume, so that no byte is read twice; otherwise the next
// step skips the value.
//
//	for it := rawjson.Walk(b, open); it.Next(); {
//		key := b[it.KeyStart:it.KeyEnd] // objects only
//		val := b[it.Value:rawjson.Skip(b, it.Value)]
//	}
type Iter struct {
	b   []byte
	pos int // where the next step reads, or -1: past the current value
	// Array says the container is an array: its steps have no key.
	Array bool
	// Index counts the steps taken: the element's index in an array.
	Index int
	// KeyStart and KeyEnd bound the member's key between its quotes, as
	// sent (escapes not decoded: match it with KeyIs).
	KeyStart, KeyEnd int
	// Value is where the member's value (or the element) starts.
	Value int
}

// Walk starts an Iter over the object or array that opens at b[open].
func Walk(b []byte, open int) Iter {
	return Iter{b: b, pos: open + 1, Array: b[open] == '[', Index: -1}
}

// Next steps to the next member or element and reports whether there is
// one. Once it has said false, End is where the container ends.
func (it *Iter) Next() bool {
	b, i := it.b, it.pos
	if i < 0 {
		i = Skip(b, it.Value)
	}
	i = SkipSpace(b, i)
	if i < len(b) && b[i] == ',' {
		i = SkipSpace(b, i+1)
	}
	it.pos = i
	if i >= len(b) || b[i] == ']' || b[i] == '}' || !it.Array && b[i] != '"' {
		return false
	}
	it.Index++
	if !it.Array {
		it.KeyStart = i + 1
		i = skipString(b, i)
		it.KeyEnd = i - 1
		i = SkipSpace(b, i)
		i = SkipSpace(b, i+1) // past ':'
	}
	it.Value, it.pos = i, -1
	return true
}

// Resume says that the current value ends at end (the index just past
// it), as a caller that read it through knows.
func (it *Iter) Resume(end int) { it.pos = end }

// End is the index just past the container's closing bracket, once Next
// has said false.
func (it *Iter) End() int { return min(it.pos+1, len(it.b)) }

// Members calls fn with the key and the raw value of each member of the
// object obj, in order, until fn returns false. obj must be well-formed
// JSON (see Check; any depth: Members does not recurse); surrounding
// whitespace is allowed. The key is the raw content between the quotes
// (escapes not decoded: match it with KeyIs). Members reports whether obj
// is an object.
func Members(obj []byte, fn func(key, val []byte) bool) bool {
	i := SkipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	for it := Walk(obj, i); it.Next(); {
		end := Skip(obj, it.Value)
		it.Resume(end)
		if !fn(obj[it.KeyStart:it.KeyEnd], obj[it.Value:end]) {
			break
		}
	}
	return true
}

// Elements calls fn with each element of the array arr, in order, until fn
// returns false. arr must be valid JSON. Elements reports whether arr is
// an array.
func Elements(arr []byte, fn func(val []byte) bool) bool {
	i := SkipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return false
	}
	for it := Walk(arr, i); it.Next(); {
		end := Skip(arr, it.Value)
		it.Resume(end)
		if !fn(arr[it.Value:end]) {
			break
		}
	}
	return true
}
