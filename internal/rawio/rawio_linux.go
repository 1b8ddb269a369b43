//go:build linux

package rawio

import (
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// file makes read(2) and write(2) on a non-blocking descriptor as raw
// system calls, inside (*os.File).SyscallConn's Read and Write, which wait
// for readiness on the netpoller when the call would block. The functions
// handed to the RawConn are made once: a closure per call would cost
// several allocations per message.
type file struct {
	f  *os.File
	rc syscall.RawConn

	rmu   sync.Mutex
	rbuf  []byte
	rn    int
	rerr  syscall.Errno
	readf func(uintptr) bool

	wmu    sync.Mutex
	wbuf   []byte
	wn     int
	werr   syscall.Errno
	writef func(uintptr) bool
}

func wrap(f *os.File) io.ReadWriteCloser {
	rc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	nonblocking := false
	_ = rc.Control(func(fd uintptr) {
		fl, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		nonblocking = e == 0 && fl&syscall.O_NONBLOCK != 0
	})
	if !nonblocking {
		return f
	}
	r := &file{f: f, rc: rc}
	r.readf, r.writef = r.read, r.write
	return r
}

func (r *file) read(fd uintptr) bool {
	for {
		p := r.rbuf
		nr, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		r.rn, r.rerr = int(nr), e
		return true
	}
}

func (r *file) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.rmu.Lock()
	defer r.rmu.Unlock()
	r.rbuf, r.rn, r.rerr = p, 0, 0
	err := r.rc.Read(r.readf)
	n, errno := r.rn, r.rerr
	r.rbuf = nil
	switch {
	case err != nil:
		return 0, err
	case errno != 0:
		return 0, &os.PathError{Op: "read", Path: r.f.Name(), Err: errno}
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (r *file) write(fd uintptr) bool {
	p := r.wbuf
	for r.wn < len(p) {
		nw, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[r.wn])), uintptr(len(p)-r.wn))
		switch e {
		case 0:
			if nw == 0 {
				r.werr = syscall.EIO // a pipe never takes nothing
				return true
			}
			r.wn += int(nw)
		case syscall.EINTR:
		case syscall.EAGAIN:
			return false
		default:
			r.werr = e
			return true
		}
	}
	return true
}

func (r *file) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.wbuf, r.wn, r.werr = p, 0, 0
	err := r.rc.Write(r.writef)
	n, errno := r.wn, r.werr
	r.wbuf = nil
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, &os.PathError{Op: "write", Path: r.f.Name(), Err: errno}
	}
	return n, nil
}

func (r *file) Close() error { return r.f.Close() }
