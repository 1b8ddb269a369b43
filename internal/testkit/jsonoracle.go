package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// LoneSurrogate reports whether b has a \u escape of a lone surrogate,
// which encoding/json turns into U+FFFD: a JSON oracle for the scanners' fuzz
// tests.
func LoneSurrogate(b []byte) bool {
	for i := 0; i+5 < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if b[i+1] != 'u' {
			i++
			continue
		}
		var u rune
		fmt.Sscanf(string(b[i+2:i+6]), "%x", &u)
		switch {
		case u >= 0xDC00 && u < 0xE000:
			return true
		case u >= 0xD800 && u < 0xDC00:
			if i+11 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' {
				return true
			}
			var lo rune
			fmt.Sscanf(string(b[i+8:i+12]), "%x", &lo)
			if lo < 0xDC00 || lo >= 0xE000 {
				return true
			}
			i += 6
		}
		i += 5
	}
	return false
}

// FoldClash reports whether some object of b has two keys equal under
// case folding, which encoding/json takes one for the other.
func FoldClash(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type level struct {
		object, wantKey bool
		keys            []string
	}
	var stack []*level
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &level{object: true, wantKey: true})
			continue
		case json.Delim('['):
			stack = append(stack, &level{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			k := tok.(string)
			for _, o := range stack[n-1].keys {
				if strings.EqualFold(o, k) {
					return true
				}
			}
			stack[n-1].keys = append(stack[n-1].keys, k)
			stack[n-1].wantKey = false
			continue
		}
		valueDone()
	}
}
