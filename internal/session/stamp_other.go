//go:build !unix

package session

import (
	"errors"
	"io/fs"
	"os"
)

// stampComplete is false here: without unix stat fields (inode, ctime) a
// rewrite that keeps size and modification time is invisible to a stat, so
// every check also compares the file's bytes (see Persistent.current).
const stampComplete = false

// statStamp describes the file at path as it is now. A missing file is a
// stamp with exists false and no error.
func statStamp(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fileStamp{}, nil
	}
	if err != nil {
		return fileStamp{}, err
	}
	return stampOfInfo(fi), nil
}

// fileStampOf describes an open file.
func fileStampOf(f *os.File) (fileStamp, error) {
	fi, err := f.Stat()
	if err != nil {
		return fileStamp{}, err
	}
	return stampOfInfo(fi), nil
}

func stampOfInfo(fi fs.FileInfo) fileStamp {
	return fileStamp{exists: true, size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}
