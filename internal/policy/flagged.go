package policy

import (
	"errors"
	"strings"
)

// Limits on the arguments one plugin verdict may flag (pdk/ABI.md 5.2).
const (
	MaxFlagged       = 16
	MaxFlaggedLength = 256
)

// CheckArgumentName says why a name a plugin flagged cannot name an
// argument: empty, longer than MaxFlaggedLength, or a JSON pointer with a
// '~' that is not "~0" or "~1" (RFC 6901).
func CheckArgumentName(name string) error {
	switch {
	case name == "":
		return errors.New("an empty argument name")
	case len(name) > MaxFlaggedLength:
		return errors.New("an argument name longer than 256 bytes")
	}
	if name[0] != '/' {
		return nil
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '~' && (i+1 == len(name) || name[i+1] != '0' && name[i+1] != '1') {
			return errors.New(`a JSON pointer with "~" not followed by 0 or 1`)
		}
	}
	return nil
}

// ArgumentPointer spells a flagged argument as a JSON pointer: a name that
// starts with '/' is one already; any other names a top-level argument.
func ArgumentPointer(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	if !strings.ContainsAny(name, "~/") {
		return "/" + name
	}
	return "/" + pointerEscaper.Replace(name)
}

var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// pointerSegments decodes a JSON pointer into its reference tokens.
func pointerSegments(ptr string) []string {
	parts := strings.Split(ptr[1:], "/")
	for i, p := range parts {
		if strings.Contains(p, "~") {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		}
	}
	return parts
}

// addFlagged adds names to dst as JSON pointers, each once.
func addFlagged(dst, names []string) []string {
	for _, n := range names {
		p := ArgumentPointer(n)
		dup := false
		for _, d := range dst {
			if d == p {
				dup = true
				break
			}
		}
		if !dup {
			dst = append(dst, p)
		}
	}
	return dst
}
