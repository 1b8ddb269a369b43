//go:build unix

package main

import (
	"os"
	"syscall"
)

// replaceProcess execs path in place of this process: the pid, stdio,
// signal handling and exit status become the companion's.
func replaceProcess(path string, argv []string) error {
	return syscall.Exec(path, argv, os.Environ())
}
