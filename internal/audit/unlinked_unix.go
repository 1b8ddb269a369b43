//go:build unix

package audit

import (
	"io/fs"
	"syscall"
)

// unlinked tells a file removed from its directory (by hand, or a rotation
// that kept nothing) from one still at a path, from its descriptor alone.
func unlinked(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}
