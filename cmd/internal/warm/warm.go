// Package warm is what a hook process and a warm hook process agree on
// (docs/hooks.md, "Warm hooks"): the socket that names one hook
// invocation, the frames of an event and its answer, and the check of the
// other end's user. `toolwarden hook --warm` speaks it as the client and
// `toolwarden hook-warm` as the server.
package warm

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"
)

const (
	// MaxEvent bounds a hook event (the hook's own limit).
	MaxEvent = 8 << 20
	// maxOutput bounds each stream of an answer.
	maxOutput = 64 << 20
	// magic names the protocol. Version 2: the hook keeps its side open
	// until it has the answer, and hanging up cancels the event.
	magic = "TWH2"
	// DebugEnv, when "1", makes a hook say on stderr who decided.
	DebugEnv = "TOOLWARDEN_WARM_DEBUG"
	// RuntimeDirEnv overrides the rendezvous directory (internal/inbox.EnvRuntimeDir),
	// which PlaceFor's error suggests.
	RuntimeDirEnv = "TOOLWARDEN_RUNTIME_DIR"
)

// Place is where the warm process of one hook invocation listens.
type Place struct {
	Sock, Lock string
}

// PlaceFor names the socket and lock of `exe hook args...` run in this
// process's directory and environment, in dir. exe is the toolwarden
// executable, as its own os.Executable reports it.
func PlaceFor(dir, exe string, args []string) (*Place, error) {
	key, err := Key(exe, args)
	if err != nil {
		return nil, err
	}
	p := &Place{Sock: filepath.Join(dir, "hook-"+key+".sock"), Lock: filepath.Join(dir, "hook-"+key+".lock")}
	if len(p.Sock) >= 104 { // sun_path holds 108 bytes on Linux, 104 elsewhere
		return nil, fmt.Errorf("socket path %s is too long (set %s to a shorter private directory)", p.Sock, RuntimeDirEnv)
	}
	return p, nil
}

// Key digests everything a hook's decision may depend on besides the files
// it reads at every event: the executable (path, size, modification time,
// inode), the working directory, the arguments and the whole environment.
// A hook and its warm process are one executable, so a rebuilt toolwarden
// (another size, time or inode) never meets a warm process of the old one.
func Key(exe string, args []string) (string, error) {
	fi, err := os.Stat(exe)
	if err != nil {
		return "", err
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	put := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put("toolwarden hook-warm 1")
	put(exe)
	put(strconv.FormatInt(fi.Size(), 10) + " " + strconv.FormatInt(fi.ModTime().UnixNano(), 10) + " " + strconv.FormatUint(inodeOf(fi), 10))
	put(wd)
	put(strconv.Itoa(len(args)))
	for _, a := range args {
		put(a)
	}
	environ := os.Environ()
	sort.Strings(environ)
	for _, kv := range environ {
		put(kv)
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// Answer is what the warm process decided: the hook's exit status and
// output, and its own pid.
type Answer struct {
	Exit           int
	PID            int
	Stdout, Stderr []byte
}

// Ask hands the event to the warm process at p and returns its answer.
// Absent says no process listens there (a missing or stale socket), so one
// may be started; any error leaves the decision to the caller.
func (p *Place) Ask(event []byte) (a Answer, absent bool, err error) {
	c, err := net.DialTimeout("unix", p.Sock, time.Second)
	if err != nil {
		return a, true, fmt.Errorf("no warm process: %w", err)
	}
	uc := c.(*net.UnixConn)
	defer uc.Close()
	if err := PeerIsUs(uc); err != nil {
		return a, false, err
	}
	// The connection stays open both ways until the answer is read: the
	// warm process takes a hang-up as the hook going away, and withdraws
	// what it was asking on the hook's behalf.
	if err := WriteEvent(uc, event); err != nil {
		return a, false, err
	}
	a, err = ReadAnswer(uc)
	return a, false, err
}

// Relay asks the warm process at p to decide event and copies its answer
// to stdout and stderr, saying who decided on stderr with debug. It
// returns the hook's exit status; on an error nothing was written, and
// absent says whether a warm process may be started (see Ask).
func (p *Place) Relay(event []byte, stdout, stderr io.Writer, debug bool) (exit int, absent bool, err error) {
	a, absent, err := p.Ask(event)
	if err != nil {
		return 0, absent, err
	}
	if debug {
		fmt.Fprintf(stderr, "toolwarden hook: decided by the warm process (pid %d)\n", a.PID)
	}
	stdout.Write(a.Stdout)
	stderr.Write(a.Stderr)
	return a.Exit, false, nil
}

// WriteEvent sends an event: the magic, then the length and the bytes.
func WriteEvent(w io.Writer, event []byte) error {
	out := make([]byte, 0, len(magic)+4+len(event))
	out = append(out, magic...)
	out = appendChunk(out, event)
	_, err := w.Write(out)
	return err
}

// ReadEvent reads an event, refusing anything but one well-formed frame.
func ReadEvent(r io.Reader) ([]byte, error) {
	var m [len(magic)]byte
	if _, err := io.ReadFull(r, m[:]); err != nil {
		return nil, err
	}
	if string(m[:]) != magic {
		return nil, errors.New("not a hook event frame")
	}
	return readChunk(r, MaxEvent+1)
}

// WriteAnswer sends an answer.
func WriteAnswer(w io.Writer, a Answer) error {
	out := make([]byte, 0, 12+8+len(a.Stdout)+len(a.Stderr))
	out = append(out, magic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(int32(a.Exit)))
	out = binary.LittleEndian.AppendUint32(out, uint32(a.PID))
	out = appendChunk(out, a.Stdout)
	out = appendChunk(out, a.Stderr)
	_, err := w.Write(out)
	return err
}

// ReadAnswer reads an answer; a short or malformed one is an error.
func ReadAnswer(r io.Reader) (Answer, error) {
	var a Answer
	var head [12]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return a, fmt.Errorf("the warm process gave no answer: %w", err)
	}
	if string(head[:4]) != magic {
		return a, errors.New("the warm process answered in another protocol")
	}
	a.Exit = int(int32(binary.LittleEndian.Uint32(head[4:8])))
	a.PID = int(binary.LittleEndian.Uint32(head[8:12]))
	var err error
	if a.Stdout, err = readChunk(r, maxOutput); err != nil {
		return a, err
	}
	if a.Stderr, err = readChunk(r, maxOutput); err != nil {
		return a, err
	}
	return a, nil
}

func appendChunk(out, b []byte) []byte {
	out = binary.LittleEndian.AppendUint32(out, uint32(len(b)))
	return append(out, b...)
}

func readChunk(r io.Reader, max int) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := int(binary.LittleEndian.Uint32(n[:]))
	if size > max {
		return nil, fmt.Errorf("frame of %d bytes, over %d", size, max)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}
