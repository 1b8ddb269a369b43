// Package rawio reads and writes the proxy's pipes (the client's stdin and
// stdout, each stdio upstream's) without the Go runtime's system call
// bookkeeping.
//
// An ordinary read or write on an *os.File enters the runtime's syscall
// state, and when the process was idle (every P idle, as it is between two
// messages of an MCP session), that wakes the sysmon thread, which then
// polls every 20 µs until the process idles again. Those wake-ups and
// sleeps cost a tools/call round trip more than the proxy's own work
// (docs/performance.md, "Proxy round trip"). On a non-blocking descriptor read(2) and write(2) never block, so
// they can be made as raw system calls: when one would block, the
// goroutine waits on the netpoller as it would anyway.
package rawio

import (
	"io"
	"os"
)

// Wrap returns f's reads and writes made as raw system calls, if f is a
// non-blocking descriptor served by the netpoller on Linux; otherwise f
// itself. Close closes f.
func Wrap(f *os.File) io.ReadWriteCloser { return wrap(f) }
