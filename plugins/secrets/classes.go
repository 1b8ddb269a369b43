package secrets

// Byte classes and string helpers of the scanner (ASCII only: every
// format it knows is ASCII).

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
func isUpperDigit(b byte) bool { return b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' }
func isWord(b byte) bool       { return isAlnum(b) || b == '_' }
func isURL64(b byte) bool      { return isWord(b) || b == '-' }
func isSlack(b byte) bool      { return isAlnum(b) || b == '-' }
func isB64(b byte) bool        { return isAlnum(b) || b == '+' || b == '/' }
func isB64Pad(b byte) bool     { return isB64(b) || b == '=' }
func isAlnumSlash(b byte) bool { return isAlnum(b) || b == '/' }
func isIdent(b byte) bool      { return isURL64(b) || b == '.' }

// isValue: the bytes of an assigned value. Blanks, quotes, brackets,
// commas, '$' (a template: ${TOKEN}) and the separators '=' and ':' end it
// (so no byte is in two values' runs, and a value's padding is left out).
func isValue(b byte) bool {
	return isAlnum(b) || oneOf(b, "+/_-.~!@#%^&*?|")
}

func oneOf(b byte, set string) bool {
	for i := 0; i < len(set); i++ {
		if set[i] == b {
			return true
		}
	}
	return false
}

// prevIs reports whether the byte before i is in the class.
func prevIs(s string, i int, class func(byte) bool) bool { return i > 0 && class(s[i-1]) }

// run returns the end of the maximal run of class bytes from i.
func run(s string, i int, class func(byte) bool) int {
	for i < len(s) && class(s[i]) {
		i++
	}
	return i
}

// has reports whether s holds lit at i.
func has(s string, i int, lit string) bool { return len(s)-i >= len(lit) && s[i:i+len(lit)] == lit }

func contains(s, lit string) bool {
	for i := 0; i+len(lit) <= len(s); i++ {
		if s[i:i+len(lit)] == lit {
			return true
		}
	}
	return false
}

// containsFold is contains with s lower-cased (ASCII); lit is lower case.
func containsFold(s, lit string) bool {
	for i := 0; i+len(lit) <= len(s); i++ {
		j := 0
		for j < len(lit) && lower(s[i+j]) == lit[j] {
			j++
		}
		if j == len(lit) {
			return true
		}
	}
	return false
}

func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
