package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolwarden/toolwarden/cmd/internal/warm"
	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/plugin"
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
// its answer. It exits after --warm-idle without events. The socket
// protocol is cmd/internal/warm.

const (
	defaultWarmIdle = 15 * time.Minute
	// maxWarmProcesses bounds the warm processes one user's hooks start:
	// an agent whose environment changes at every call would otherwise
	// start one per call.
	maxWarmProcesses = 8
	// warmDebugEnv, when "1", makes a --warm hook say on stderr who
	// decided (tests, and users checking that the warm process works).
	warmDebugEnv = warm.DebugEnv
)

func init() {
	register(command{name: "hook-warm", summary: "serve hook events of one command line from a warm process (started by hook --warm)", run: runHookWarmProcess, hidden: true})
}

// placeFor names the socket and lock file of the warm process for args
// run here, in the rendezvous directory (private to the user: internal/inbox
// creates and checks it).
func placeFor(args []string) (*warm.Place, error) {
	if !warm.Supported {
		return nil, errors.New("warm hooks need Linux")
	}
	dir, err := inbox.Dir()
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return warm.PlaceFor(dir, exe, args)
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
		if code, absent, err = place.Relay(data, e.stdout, e.stderr, debug); err == nil {
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
		if err := startWarm(place, args); err != nil && debug {
			fmt.Fprintf(e.stderr, "toolwarden hook: no warm process started: %v\n", err)
		}
	}
	return code
}

// startWarm launches the warm process for args, detached from the agent: a
// session of its own and no inherited streams, so the agent, which waits
// for the hook's output to end, never waits for it.
func startWarm(p *warm.Place, args []string) error {
	socks, _ := filepath.Glob(filepath.Join(filepath.Dir(p.Sock), "hook-*.sock"))
	if len(socks) >= maxWarmProcesses {
		return fmt.Errorf("%d warm processes already listen in %s", len(socks), filepath.Dir(p.Sock))
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
	release, err := lockExclusive(place.Lock)
	if err != nil {
		return exitOK // another warm process serves this invocation
	}
	defer release()
	// Under the lock no live process owns the socket: a file left there is
	// a crashed one's.
	_ = os.Remove(place.Sock)
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: place.Sock, Net: "unix"})
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden hook-warm: %v\n", err)
		return exitError
	}
	ln.SetUnlinkOnClose(true)
	if err := os.Chmod(place.Sock, 0o600); err != nil {
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
	if h, err := host.New(ctx, cfg, hostDefaults().WithPluginRuntime(w.rt)); err == nil {
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
	// The hook that connected is the process the agent ran for this event:
	// an ask in the inbox names it, not this one.
	asker, err := warm.Peer(c)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	event, err := warm.ReadEvent(c)
	if err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	// The hook sends nothing more: a read that returns means it hung up
	// (it was killed, or the agent gave up on it), and the event stops,
	// withdrawing an ask it was waiting on in the inbox.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		var b [1]byte
		_, _ = c.Read(b[:])
		cancel()
	}()
	var stdout, stderr bytes.Buffer
	var later []func()
	defer func() {
		for _, f := range later {
			f()
		}
	}()
	e := &env{stdin: bytes.NewReader(event), stdout: &stdout, stderr: &stderr, getenv: os.Getenv, pluginRuntime: w.rt,
		afterAnswer: func(f func()) { later = append(later, f) }, ctx: ctx, askerPID: asker}
	f, code, ok := parseHookFlags(e, w.args)
	if ok {
		code = decideHook(e, f)
	}
	_ = warm.WriteAnswer(c, warm.Answer{Exit: code, PID: os.Getpid(), Stdout: stdout.Bytes(), Stderr: stderr.Bytes()})
	c.Close() // the hook has its answer; the host closes after
}
