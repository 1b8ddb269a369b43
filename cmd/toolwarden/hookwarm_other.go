//go:build !linux

package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
)

// warmSupported: elsewhere --warm decides every event in the hook process.
const warmSupported = false

var errNoWarm = errors.New("warm hooks need Linux")

func peerIsUs(*net.UnixConn) error                     { return errNoWarm }
func lockExclusive(string) (release func(), err error) { return nil, errNoWarm }
func detach(*exec.Cmd)                                 {}
func inodeOf(os.FileInfo) uint64                       { return 0 }
