//go:build unix

package session

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, waiting for other processes
// (toolwarden hooks and proxies sharing an approvals or session file).
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }

// unlockFile releases lockFile's lock.
func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
