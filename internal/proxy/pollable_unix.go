//go:build unix

package proxy

import (
	"io"
	"os"
	"syscall"
)

// pollable returns a pipe or socket given as an *os.File (stdin, stdout)
// as a new *os.File in non-blocking mode, which Go's netpoller serves.
// os.Stdin and os.Stdout are blocking: every read parks an OS thread in
// read(2), the scheduler hands its P away, and each message then waits to
// get a P back, the larger part of the proxy's added round-trip time
// (docs/performance.md, "Proxy round trip"). Terminals and files are left alone (a terminal
// left non-blocking would break the shell after we exit).
func pollableReader(r io.Reader) io.Reader {
	if f, ok := r.(*os.File); ok {
		if nf := pollable(f); nf != nil {
			return nf
		}
	}
	return r
}

func pollableWriter(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok {
		if nf := pollable(f); nf != nil {
			return nf
		}
	}
	return w
}

func pollable(f *os.File) *os.File {
	s := (*os.File)(nil)
	st, err := f.Stat()
	if err != nil || st.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return s
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return s
	}
	dup := -1
	_ = rc.Control(func(fd uintptr) {
		d, err := syscall.Dup(int(fd))
		if err != nil {
			return
		}
		syscall.CloseOnExec(d)
		if err := syscall.SetNonblock(d, true); err != nil {
			syscall.Close(d)
			return
		}
		dup = d
	})
	if dup < 0 {
		return s
	}
	return os.NewFile(uintptr(dup), f.Name())
}
