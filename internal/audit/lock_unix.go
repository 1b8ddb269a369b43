//go:build unix

package audit

import (
	"os"
	"syscall"
)

// lockShared lets many writers append at once while no one rotates.
func lockShared(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_SH) }

// lockExclusive keeps every writer out while the log is rotated.
func lockExclusive(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
