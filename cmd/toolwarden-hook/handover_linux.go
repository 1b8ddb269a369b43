package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// handOver replaces this process with `tw argv...` reading event on its
// stdin, from an anonymous in-memory file (memfd): the event may be larger
// than a pipe holds, and nothing is left on disk.
func handOver(tw string, argv []string, event []byte) error {
	fd, err := unix.MemfdCreate("toolwarden-hook-event", 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), "event")
	defer f.Close()
	if _, err := f.Write(event); err != nil {
		return err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return err
	}
	if err := unix.Dup3(fd, 0, 0); err != nil {
		return err
	}
	return syscall.Exec(tw, append([]string{tw}, argv...), os.Environ())
}
