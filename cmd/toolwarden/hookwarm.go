package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/host/plugin"
	"github.com/toolwarden/toolwarden/sdk/inbox"
)

// Warm hooks (docs/hooks.md, "Warm hooks").
//
// An agent runs `toolwarden hook` once per tool call, and a process that
// loads a WebAssembly plugin pays for wazero decoding and validating the
// module at every start, compiled code cache or not: several times the
// cost of the process itself. With --warm, the first event is decided as
// always and then starts `toolwarden hook-warm` with the same arguments,
// directory and environment. That process keeps one plugin runtime, so
// each plugin binary is compiled once, and listens on a unix socket in the
// user's private rendezvous directory. Later events of the same command
// line find it there and hand it their stdin; it decides exactly as a
// fresh process would (config, requirements, session file, catalog and
// approvals are read again for every event, and every event gets a host
// of its own) and sends back the exit status, stdout and stderr.
//
// A warm process serves only the invocation it was started for: its
// socket is named by a digest of the executable (path, size, mtime,
// inode), the working directory, the arguments and the whole environment,
// so a changed binary, directory, flag or variable reaches another
// process (or none) and never gets a decision made under different
// inputs. Both ends check the other's uid (SO_PEERCRED). When anything
// fails (no process, a stale socket, a crash mid-event) the hook decides
// itself, so a warm process can make an event faster but never changes
// its answer. It exits after --warm-idle without events.

const (
	defaultWarmIdle = 15 * time.Minute
	// maxWarmProcesses bounds the warm processes one user's hooks start:
	// an agent whose environment changes at every call would otherwise
	// start one per call.
	maxWarmProcesses = 8
	// warmDebugEnv, when "1", makes a --warm hook say on stderr who
	// decided (tests, and users checking that the warm process works).
	warmDebugEnv = "TOOLWARDEN_WARM_DEBUG"
	warmMagic    = "TWH1"
	// maxWarmOutput bounds each stream of a warm process's answer.
	maxWarmOutput = 64 << 20
)

func init() {
	register(command{name: "hook-warm", summary: "serve hook events of one command line from a warm process (started by hook --warm)", run: runHookWarmProcess, hidden: true})
}

// warmPlace is where a hook invocation's warm process listens.
type warmPlace struct {
	sock, lock string
}

// placeFor names the socket and lock file of the warm process for args
// run here, in the rendezvous directory (private to the user: sdk/inbox).
func placeFor(args []string) (*warmPlace, error) {
	if !warmSupported {
		return nil, errors.New("warm hooks need Linux")
	}
	dir, err := inbox.Dir()
	if err != nil {
		return nil, err
	}
	key, err := warmKey(args)
	if err != nil {
		return nil, err
	}
	p := &warmPlace{sock: filepath.Join(dir, "hook-"+key+".sock"), lock: filepath.Join(dir, "hook-"+key+".lock")}
	if len(p.sock) >= 104 { // sun_path holds 108 bytes on Linux, 104 elsewhere
		return nil, fmt.Errorf("socket path %s is too long (set %s to a shorter private directory)", p.sock, inbox.EnvRuntimeDir)
	}
	return p, nil
}

// warmKey digests everything a hook's decision may depend on besides the
// files it reads at every event: the executable, the working directory,
// the arguments and the environment.
func warmKey(args []string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
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
	put(strconv.FormatInt(fi.Size(), 10) + " " + strconv.FormatInt(fi.ModTime().UnixNano(), 10) + " " + fileID(fi))
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

// runHookWarm is `toolwarden hook --warm`: the event goes to the warm
// process when one serves this invocation; else it is decided here and a
// warm process is started for the next one.
func runHookWarm(e *env, args []string, f *hookFlags) int {
	data, err := io.ReadAll(io.LimitReader(e.stdin, maxHookEvent+1))
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden hook: reading the event: %v (call blocked)\n", err)
		return exitBlock
	}
	debug := e.getenv(warmDebugEnv) == "1"
	place, err := placeFor(args)
	absent := false
	if err == nil {
		var code int
		var pid uint32
		if code, pid, absent, err = place.ask(e, data); err == nil {
			if debug {
				fmt.Fprintf(e.stderr, "toolwarden hook: decided by the warm process (pid %d)\n", pid)
			}
			return code
		}
	}
	if debug {
		fmt.Fprintf(e.stderr, "toolwarden hook: decided here: %v\n", err)
	}
	cold := *e
	cold.stdin = bytes.NewReader(data)
	code := decideHook(&cold, f)
	if absent {
		if err := place.start(args); err != nil && debug {
			fmt.Fprintf(e.stderr, "toolwarden hook: no warm process started: %v\n", err)
		}
	}
	return code
}

// ask hands the event to the warm process and relays its answer. absent
// says no process listens (a missing or stale socket), so one may be
// started; any error leaves the decision to the caller.
func (p *warmPlace) ask(e *env, event []byte) (code int, pid uint32, absent bool, err error) {
	c, err := net.DialTimeout("unix", p.sock, time.Second)
	if err != nil {
		return 0, 0, true, fmt.Errorf("no warm process: %w", err)
	}
	uc := c.(*net.UnixConn)
	defer uc.Close()
	if err := peerIsUs(uc); err != nil {
		return 0, 0, false, err
	}
	if err := writeFrame(uc, event); err != nil {
		return 0, 0, false, err
	}
	_ = uc.CloseWrite()
	var head [12]byte
	if _, err := io.ReadFull(uc, head[:]); err != nil {
		return 0, 0, false, fmt.Errorf("the warm process gave no answer: %w", err)
	}
	if string(head[:4]) != warmMagic {
		return 0, 0, false, errors.New("the warm process answered in another protocol")
	}
	code = int(int32(binary.LittleEndian.Uint32(head[4:8])))
	pid = binary.LittleEndian.Uint32(head[8:12])
	stdout, err := readChunk(uc, maxWarmOutput)
	if err != nil {
		return 0, 0, false, err
	}
	stderr, err := readChunk(uc, maxWarmOutput)
	if err != nil {
		return 0, 0, false, err
	}
	e.stdout.Write(stdout)
	e.stderr.Write(stderr)
	return code, pid, false, nil
}

// start launches the warm process for args, detached from the agent: a
// session of its own and no inherited streams, so the agent, which waits
// for the hook's output to end, never waits for it.
func (p *warmPlace) start(args []string) error {
	socks, _ := filepath.Glob(filepath.Join(filepath.Dir(p.sock), "hook-*.sock"))
	if len(socks) >= maxWarmProcesses {
		return fmt.Errorf("%d warm processes already listen in %s", len(socks), filepath.Dir(p.sock))
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, append([]string{"hook-warm"}, args...)...)
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	return cmd.Process.Release()
}

// runHookWarmProcess is `toolwarden hook-warm ARGS`: the warm process for
// `toolwarden hook ARGS`, run in the hook's directory and environment.
func runHookWarmProcess(e *env, args []string) int {
	f, code, ok := parseHookFlags(e, args)
	if !ok {
		return code
	}
	place, err := placeFor(args)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden hook-warm: %v\n", err)
		return exitError
	}
	release, err := lockExclusive(place.lock)
	if err != nil {
		return exitOK // another warm process serves this invocation
	}
	defer release()
	// Under the lock no live process owns the socket: a file left there is
	// a crashed one's.
	_ = os.Remove(place.sock)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: place.sock, Net: "unix"})
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden hook-warm: %v\n", err)
		return exitError
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(place.sock, 0o600); err != nil {
		ln.Close()
		return exitError
	}
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{})
	if err != nil {
		ln.Close()
		return exitError
	}
	defer rt.Close(ctx)
	w := &warmProcess{args: args, rt: rt, ln: ln, idle: f.warmIdle}
	w.compile(e, f)
	w.serve()
	return exitOK
}

// warmProcess serves the events of one hook invocation.
type warmProcess struct {
	args []string
	rt   *plugin.Runtime
	ln   *net.UnixListener
	idle time.Duration

	mu     sync.Mutex
	active int
	timer  *time.Timer
	wg     sync.WaitGroup
}

// compile loads the configured plugins once, before the first event
// arrives, so that it finds them compiled.
func (w *warmProcess) compile(e *env, f *hookFlags) {
	cfg, err := loadConfig(&env{stdin: bytes.NewReader(nil), stdout: io.Discard, stderr: io.Discard, getenv: e.getenv}, f.configs, f.reqs)
	if err != nil {
		return // every event reports it
	}
	ctx := context.Background()
	if h, err := host.New(ctx, cfg, host.Defaults().WithPluginRuntime(w.rt)); err == nil {
		h.Close(ctx)
	}
}

func (w *warmProcess) serve() {
	w.timer = time.AfterFunc(w.idle, w.idleOut)
	for {
		c, err := w.ln.AcceptUnix()
		if err != nil {
			break // closed when idle
		}
		w.begin()
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			defer w.end()
			w.handle(c)
		}()
	}
	w.wg.Wait()
}

func (w *warmProcess) begin() {
	w.mu.Lock()
	w.active++
	w.timer.Stop()
	w.mu.Unlock()
}

func (w *warmProcess) end() {
	w.mu.Lock()
	w.active--
	if w.active == 0 {
		w.timer.Reset(w.idle)
	}
	w.mu.Unlock()
}

// idleOut stops listening when no event came for the idle time (an
// event that arrived meanwhile keeps the process).
func (w *warmProcess) idleOut() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.active == 0 {
		w.ln.Close()
	}
}

// handle decides one event. A failure closes the connection without an
// answer, and the hook then decides the event itself.
func (w *warmProcess) handle(c *net.UnixConn) {
	defer c.Close()
	defer func() { _ = recover() }()
	if peerIsUs(c) != nil {
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	event, err := readFrame(c)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	var stdout, stderr bytes.Buffer
	e := &env{stdin: bytes.NewReader(event), stdout: &stdout, stderr: &stderr, getenv: os.Getenv, pluginRuntime: w.rt}
	f, code, ok := parseHookFlags(e, w.args)
	if ok {
		code = decideHook(e, f)
	}
	var head [12]byte
	copy(head[:4], warmMagic)
	binary.LittleEndian.PutUint32(head[4:8], uint32(int32(code)))
	binary.LittleEndian.PutUint32(head[8:12], uint32(os.Getpid()))
	var out bytes.Buffer
	out.Write(head[:])
	writeChunk(&out, stdout.Bytes())
	writeChunk(&out, stderr.Bytes())
	_, _ = c.Write(out.Bytes())
}

// writeFrame sends the event: the magic, then the length and the bytes.
func writeFrame(w io.Writer, b []byte) error {
	var out bytes.Buffer
	out.WriteString(warmMagic)
	writeChunk(&out, b)
	_, err := w.Write(out.Bytes())
	return err
}

func readFrame(r io.Reader) ([]byte, error) {
	var magic [4]byte
	if _, err := io.ReadFull(r, magic[:]); err != nil {
		return nil, err
	}
	if string(magic[:]) != warmMagic {
		return nil, errors.New("not a hook event frame")
	}
	return readChunk(r, maxHookEvent+1)
}

func writeChunk(out *bytes.Buffer, b []byte) {
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(b)))
	out.Write(n[:])
	out.Write(b)
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

// fileID is the inode of fi where the platform has one.
func fileID(fi os.FileInfo) string {
	if id := inodeOf(fi); id != 0 {
		return strconv.FormatUint(id, 10)
	}
	return strings.TrimSpace(fi.Mode().String())
}
