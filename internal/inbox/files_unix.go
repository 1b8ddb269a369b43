//go:build unix

package inbox

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// errSymlink is what openNoFollow fails with on a symlink.
var errSymlink = syscall.ELOOP

// openNoFollow opens a file for reading, never through a symlink, and
// without blocking on a FIFO someone put in its place.
func openNoFollow(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// ownerUID is the uid owning fi.
func ownerUID(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// processExists: signal 0 checks without signalling. EPERM means the
// process exists under another user, which still counts.
func processExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
