//go:build !linux

package warm

import (
	"errors"
	"net"
	"os"
)

// Supported: elsewhere a hook decides every event itself.
const Supported = false

// PeerIsUs cannot check the other end here, so it refuses every one.
func PeerIsUs(*net.UnixConn) error { return errors.New("warm hooks need Linux") }

// Peer cannot check the other end here, so it refuses every one.
func Peer(*net.UnixConn) (int, error) { return 0, errors.New("warm hooks need Linux") }

func inodeOf(os.FileInfo) uint64 { return 0 }
