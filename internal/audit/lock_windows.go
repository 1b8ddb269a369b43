//go:build windows

package audit

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockShared lets many writers append at once while no one rotates.
func lockShared(f *os.File) error { return lockRange(f, 0) }

// lockExclusive keeps every writer out while the log is rotated.
func lockExclusive(f *os.File) error { return lockRange(f, windows.LOCKFILE_EXCLUSIVE_LOCK) }

func lockRange(f *os.File, flags uint32) error {
	var o windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &o)
}

func unlock(f *os.File) error {
	var o windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &o)
}
