package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// CutText bounds a text to about budget bytes: a text that fits is
// returned as it is; a longer one is cut as a prompt cuts a value (shown
// escaped, as JSON would spell it, cut on a character boundary), ends in
// "…" and says how many bytes were left out and the SHA-256 of the whole,
// so what is shown is still named exactly. Pages that show text someone
// else rendered (the approval inbox) bound it with this cutter rather than
// one of their own.
func CutText(s string, budget int) string {
	if len(s) <= budget {
		return s
	}
	buf, stop := appendText(nil, s, budget)
	sum := sha256.Sum256([]byte(s))
	buf = append(buf, "… ("...)
	buf = strconv.AppendInt(buf, int64(len(s)-stop), 10)
	buf = append(buf, " of "...)
	buf = strconv.AppendInt(buf, int64(len(s)), 10)
	buf = append(buf, " bytes cut, sha256 "...)
	buf = append(buf, hex.EncodeToString(sum[:])...)
	return string(append(buf, ')'))
}
