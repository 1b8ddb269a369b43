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
	_, err := Peer(c)
	return err
}

// Peer returns the process id of the connection's other end, and refuses
// one that runs as another user. The kernel reports the other end's
// credentials as they were when it connected, so nothing it sends can
// change them.
func Peer(c *net.UnixConn) (pid int, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	if int(cred.Uid) != os.Getuid() {
		return 0, fmt.Errorf("the warm socket's other end runs as uid %d, not as you (uid %d)", cred.Uid, os.Getuid())
	}
	return int(cred.Pid), nil
}

func inodeOf(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
