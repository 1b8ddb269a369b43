package upstream

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Why a stdio server did not start, said so that a user can act on it:
// a command that is not installed is named with the PATH it was looked
// for in (exec's lookup fails at once, no need to wait for the startup
// timeout), and a server that exited before the handshake is reported with
// its exit status and the end of its stderr (npx of a mistyped package
// prints "npm ERR! 404" there and exits 1). The agent sees this text: wrap
// answers the client's initialize with it, proxy puts it in the tool
// error of every call to the server's tools.

// NotFoundError: the server's command is not installed (or not on PATH).
type NotFoundError struct {
	Command string
	Path    string // the PATH it was looked for in
	Err     error
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("command %q was not found in PATH (%s): install it, or give its full path", e.Command, e.Path)
}

func (e *NotFoundError) Unwrap() error { return e.Err }

// ExitedError: the server's process ended before it completed the MCP
// handshake (or its first tools/list).
type ExitedError struct {
	Command string // the program, without its arguments (which may hold secrets)
	Status  string // "exit status 1", "signal: killed"
	Stderr  string // the last lines it wrote to stderr, if any
}

func (e *ExitedError) Error() string {
	msg := fmt.Sprintf("%s exited (%s) before completing the MCP handshake", e.Command, e.Status)
	if e.Stderr == "" {
		return msg + "; it wrote nothing to stderr"
	}
	return msg + "; the end of its stderr: " + e.Stderr
}

// notFound turns exec's lookup failure into a NotFoundError, and passes
// anything else through.
func notFound(cmd *exec.Cmd, command string) error {
	if cmd.Err == nil {
		return nil
	}
	if errors.Is(cmd.Err, exec.ErrNotFound) {
		return &NotFoundError{Command: command, Path: os.Getenv("PATH"), Err: cmd.Err}
	}
	return fmt.Errorf("starting %s: %w", command, cmd.Err)
}

// exitWait bounds how long a failed handshake waits for the server's
// process to be reaped (its stdout closes a moment before it is), so that
// the error can carry its exit status.
const exitWait = 3 * time.Second

// exitedErr is the ExitedError for a stdio connection whose process has
// ended (waiting up to exitWait), or nil if it is still running.
func (c *Client) exitedErr(st *stdioTransport) error {
	if st == nil || !st.waitExit(exitWait) {
		return nil
	}
	status := "status unknown"
	if ps := st.cmd.ProcessState; ps != nil {
		status = ps.String()
	}
	e := &ExitedError{Command: c.spec.Command, Status: status}
	if st.tail != nil {
		e.Stderr = st.tail.String()
	}
	return e
}

// stderrTail keeps the last lines a server wrote to stderr (at most
// tailLines lines of at most tailBytes bytes in all), for ExitedError.
type stderrTail struct {
	mu  sync.Mutex
	buf []byte
}

const (
	tailBytes = 2 << 10
	tailLines = 5
)

func (t *stderrTail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*tailBytes {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-tailBytes:]...)
	}
	return len(b), nil
}

// String is the kept lines, joined by " | " (the error is one line).
func (t *stderrTail) String() string {
	t.mu.Lock()
	s := string(t.buf)
	t.mu.Unlock()
	if len(s) > tailBytes {
		s = s[len(s)-tailBytes:]
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return strings.Join(lines, " | ")
}

// teeWriter copies a server's stderr to its tail and to out (nil: nowhere).
// It never fails: a failing out must not stop the copy, which would leave
// the server blocked on a full stderr pipe.
type teeWriter struct {
	tail *stderrTail
	out  interface{ Write([]byte) (int, error) }
}

func (w teeWriter) Write(b []byte) (int, error) {
	_, _ = w.tail.Write(b)
	if w.out != nil {
		_, _ = w.out.Write(b)
	}
	return len(b), nil
}
