//go:build unix

package session

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// stampComplete: a stat sees every rewrite here, except one within the
// filesystem's timestamp tick (see racyWindow).
const stampComplete = true

// statStamp describes the file at path as it is now. A missing file is a
// stamp with exists false and no error.
func statStamp(path string) (fileStamp, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fileStamp{}, nil
		}
		return fileStamp{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return stampOf(&st), nil
}

// fileStampOf describes an open file: the stamp of exactly what is read
// from it, even if the path is replaced meanwhile.
func fileStampOf(f *os.File) (fileStamp, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileStamp{}, &os.PathError{Op: "fstat", Path: f.Name(), Err: err}
	}
	return stampOf(&st), nil
}

// stampOf keeps what changes when the file is rewritten: ctime changes on
// every write and on os.Chtimes, so a rewrite that restores size and mtime
// is still seen; inode and device change when the file is replaced by
// rename.
func stampOf(st *unix.Stat_t) fileStamp {
	return fileStamp{
		exists: true,
		size:   st.Size,
		mtime:  st.Mtim.Nano(),
		ctime:  st.Ctim.Nano(),
		ino:    uint64(st.Ino),
		dev:    uint64(st.Dev), //nolint:unconvert // int32 on darwin
	}
}
