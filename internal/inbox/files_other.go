//go:build !unix

package inbox

import (
	"errors"
	"io/fs"
	"os"
)

// errSymlink is what openNoFollow fails with on a symlink.
var errSymlink = errors.New("symlink")

// openNoFollow opens a file for reading, refusing a symlink. Without
// O_NOFOLLOW, a symlink swapped in between the check and the open is not
// caught here; the directory being private is what keeps others out.
func openNoFollow(path string) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, errSymlink
	}
	return os.Open(path)
}

// ownerUID: there are no uids here; the mode check stands alone.
func ownerUID(fs.FileInfo) (int, bool) { return 0, false }

// processExists: a process that can be found exists.
func processExists(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
