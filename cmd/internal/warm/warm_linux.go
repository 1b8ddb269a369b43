package warm

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// Supported: the other end's user is checked with SO_PEERCRED.
const Supported = true

// PeerIsUs refuses a connection whose other end runs as another user. The
// rendezvous directory is private already; this holds even if it were not.
func PeerIsUs(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the warm socket's other end runs as uid %d, not as you (uid %d)", cred.Uid, os.Getuid())
	}
	return nil
}

func inodeOf(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
