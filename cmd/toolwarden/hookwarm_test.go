package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/cmd/internal/warm"
	"github.com/toolwarden/toolwarden/internal/inbox"
	"github.com/toolwarden/toolwarden/internal/plugin"
)

// These tests run the real binary: a --warm hook process, the warm process
// it starts, and the events later hook processes hand it.

var warmPIDLine = regexp.MustCompile(`decided by the warm process \(pid (\d+)\)`)

// warmMagic is the protocol's magic, as warm.WriteEvent writes it.
func warmMagic() string {
	var b bytes.Buffer
	_ = warm.WriteEvent(&b, nil)
	return b.String()[:4]
}

// warmPID reads who decided from a --warm hook's debug line.
func warmPID(out []byte) (int, bool) {
	m := warmPIDLine.FindSubmatch(out)
	if m == nil {
		return 0, false
	}
	pid, err := strconv.Atoi(string(m[1]))
	return pid, err == nil
}

// shortTempDir is a private directory with a short path (a unix socket's
// path is limited to about 100 bytes), removed when the test ends.
func shortTempDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "tw")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// warmSetup is one hook invocation's files, run with --warm.
type warmSetup struct {
	t                     *testing.T
	bin, dir, rdv, config string
	args                  []string
	env                   []string
}

const warmConfig = `
[apps.fs]
destructive_enabled = true

[policies.argguard]
builtin = "argguard"
config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }]
`

func newWarmSetup(t *testing.T) *warmSetup {
	t.Helper()
	binaries(t)
	w := &warmSetup{t: t, bin: built.tw, dir: t.TempDir(), rdv: shortTempDir(t)}
	w.config = filepath.Join(w.dir, "tw.toml")
	w.writeConfig(warmConfig)
	tools := writeTools(t, w.dir, `{"readOnlyHint":true,"openWorldHint":false}`)
	w.args = []string{"hook", "--agent", "claude", "--config", w.config, "--state-dir", filepath.Join(w.dir, "state"), "--tools", tools, "--warm", "--warm-idle", "30s"}
	// Paths as toolwarden's os.Executable reports them (the warm process is
	// named after it).
	if real, err := filepath.EvalSymlinks(w.bin); err == nil {
		w.bin = real
	}
	w.env = append(os.Environ(), inbox.EnvRuntimeDir+"="+w.rdv, warmDebugEnv+"=1", "XDG_CACHE_HOME="+filepath.Join(w.dir, "cache"))
	t.Cleanup(func() { stopWarmProcesses(t, w.rdv) })
	return w
}

// stopWarmProcesses kills every warm process that meets in rendezvous
// directory rdv (some were started by events with another key, whose
// pids no test saw) and waits for them, before the test's directories go.
func stopWarmProcesses(tb testing.TB, rdv string) {
	tb.Helper()
	for _, pid := range warmProcesses(rdv) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		waitGone(tb, pid)
	}
}

func countWarmProcesses(rdv string) int {
	n := 0
	for _, pid := range warmProcesses(rdv) {
		if data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && !strings.Contains(string(data), ") Z ") {
			n++
		}
	}
	return n
}

// warmProcesses lists the warm processes whose environment names rdv.
func warmProcesses(rdv string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, err := os.ReadFile(filepath.Join(p, "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte("\x00hook-warm\x00")) {
			continue
		}
		environ, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, environ...), []byte("\x00"+inbox.EnvRuntimeDir+"="+rdv+"\x00")) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(p)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func (w *warmSetup) writeConfig(text string) {
	w.t.Helper()
	if err := os.WriteFile(w.config, []byte(text), 0o600); err != nil {
		w.t.Fatal(err)
	}
}

// event runs one hook process with the event on stdin: its exit status,
// stdout, and the warm process that decided (0: the hook itself).
func (w *warmSetup) event(ev string, extraEnv ...string) (int, string, int) {
	w.t.Helper()
	return w.eventIn("", ev, extraEnv...)
}

func (w *warmSetup) eventIn(dir, ev string, extraEnv ...string) (int, string, int) {
	w.t.Helper()
	code, stdout, stderr := runHookProcess(w.t, dir, append(append([]string(nil), w.env...), extraEnv...), ev, w.bin, w.args...)
	pid, _ := warmPID([]byte(stderr))
	return code, stdout, pid
}

// runHookProcess runs bin args in dir (empty: here) with env and the event
// on stdin: its exit status, stdout and stderr.
func runHookProcess(t *testing.T, dir string, env []string, ev, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(ev)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, stdout.String(), stderr.String()
}

// warmUp runs ev until a warm process decides it, and returns its pid.
func (w *warmSetup) warmUp(ev string, extraEnv ...string) int {
	w.t.Helper()
	for i := 0; i < 200; i++ {
		if _, _, pid := w.event(ev, extraEnv...); pid != 0 {
			return pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	w.t.Fatal("no warm process decided an event")
	return 0
}

func TestWarmHooksDecideAsAFreshProcessDoes(t *testing.T) {
	w := newWarmSetup(t)
	w.warmUp(claudeEvent("read_text_file"))
	events := []struct{ name, ev string }{
		{"a read the tools file calls read-only", claudeEvent("read_text_file")},
		{"a destructive write", claudeEvent("write_file")},
		{"a write argguard denies", `{"session_id":"c1","hook_event_name":"PreToolUse","tool_name":"mcp__fs__write_file","tool_input":{"path":"/etc/passwd"}}`},
		{"an event after the call", `{"session_id":"c1","hook_event_name":"PostToolUse","tool_name":"mcp__fs__write_file","tool_input":{"path":"/tmp/x"},"tool_response":"ok"}`},
		{"an event that is not JSON", `{"tool_name":`},
		{"a session id naming another directory", `{"session_id":"../../etc","tool_name":"mcp__fs__write_file"}`},
		{"an event over the size limit", `{"session_id":"c1","tool_name":"mcp__fs__write_file","tool_input":{"content":"` + strings.Repeat("x", maxHookEvent) + `"}}`},
	}
	for _, e := range events {
		t.Run(e.name, func(t *testing.T) {
			code, out, pid := w.event(e.ev)
			if pid == 0 {
				t.Fatal("not decided by the warm process")
			}
			// The same event in a fresh process, without --warm.
			wantCode, want, _ := runHookProcess(t, "", w.env, e.ev, w.bin, w.args[:len(w.args)-3]...)
			if code != wantCode || out != want {
				t.Fatalf("warm: exit %d %s\nfresh process: exit %d %s", code, out, wantCode, want)
			}
		})
	}
}

func TestAWarmProcessReadsTheConfigAndSessionAgainAtEveryEvent(t *testing.T) {
	w := newWarmSetup(t)
	write := `{"session_id":"c1","hook_event_name":"PreToolUse","tool_name":"mcp__fs__write_file","tool_input":{"path":"/home/me/notes"}}`
	pid := w.warmUp(write)
	if _, out, _ := w.event(write); permission(t, out) != "ask" {
		t.Fatalf("before the change: %s", out)
	}
	w.writeConfig(strings.Replace(warmConfig, `"/etc/**"`, `"/home/**"`, 1))
	code, out, by := w.event(write)
	if by != pid || code != 0 || permission(t, out) != "deny" || !strings.Contains(out, "/home/**") {
		t.Fatalf("after the config change (pid %d, want %d): exit %d %s", by, pid, code, out)
	}

	// The session file holds the pin: a definition that changed since is
	// drift, and its relaxing hints are not believed, in the warm process
	// as in fresh ones.
	read := claudeEvent("read_text_file")
	if _, out, _ := w.event(read); permission(t, out) != "allow" {
		t.Fatalf("read: %s", out)
	}
	writeTools(t, w.dir, `{"readOnlyHint":true,"destructiveHint":false,"openWorldHint":false,"idempotentHint":true}`)
	if _, out, by := w.event(read); by != pid || permission(t, out) != "ask" || !strings.Contains(out, "drift") {
		t.Fatalf("after drift (pid %d): %s", by, out)
	}
}

func TestAWarmProcessServesOnlyItsOwnInvocation(t *testing.T) {
	w := newWarmSetup(t)
	ev := claudeEvent("read_text_file")
	pid := w.warmUp(ev)
	cases := []struct {
		name string
		run  func() int
	}{
		{"another value of a variable", func() int { _, _, by := w.event(ev, "TOOLWARDEN_TEST_VARIABLE=2"); return by }},
		{"another working directory", func() int { _, _, by := w.eventIn(t.TempDir(), ev); return by }},
		{"another flag", func() int {
			saved := w.args
			w.args = append(append([]string(nil), saved...), "--approval-timeout", "7s")
			defer func() { w.args = saved }()
			_, _, by := w.event(ev)
			return by
		}},
		{"another executable", func() int {
			saved := w.bin
			w.bin = filepath.Join(t.TempDir(), "toolwarden")
			data, err := os.ReadFile(saved)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(w.bin, data, 0o755); err != nil {
				t.Fatal(err)
			}
			defer func() { w.bin = saved }()
			_, _, by := w.event(ev)
			return by
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if by := c.run(); by == pid {
				t.Fatalf("decided by the warm process %d of another invocation", pid)
			}
		})
	}
	if _, _, by := w.event(ev); by != pid {
		t.Fatalf("the original invocation is no longer served by %d (got %d)", pid, by)
	}
}

// Events that arrive together, before any warm process, start one: the
// others find it starting (its lock) and leave.
func TestConcurrentFirstEventsStartOneWarmProcess(t *testing.T) {
	w := newWarmSetup(t)
	ev := claudeEvent("read_text_file")
	done := make(chan string, 6)
	for range 6 {
		go func() {
			cmd := exec.Command(w.bin, w.args...)
			cmd.Env = w.env
			cmd.Stdin = strings.NewReader(ev)
			out, _ := cmd.Output()
			done <- string(out)
		}()
	}
	for range 6 {
		if out := <-done; permission(t, out) != "allow" {
			t.Fatalf("%s", out)
		}
	}
	pid := w.warmUp(ev)
	for range 5 {
		if _, _, by := w.event(ev); by != pid {
			t.Fatalf("decided by %d, then by %d", pid, by)
		}
	}
	time.Sleep(200 * time.Millisecond) // a late starter finds the lock taken and exits
	if n := countWarmProcesses(w.rdv); n != 1 {
		t.Fatalf("%d warm processes for one invocation", n)
	}
}

func TestAHookDecidesItselfWhenTheWarmProcessIsGone(t *testing.T) {
	w := newWarmSetup(t)
	deny := `{"session_id":"c1","hook_event_name":"PreToolUse","tool_name":"mcp__fs__write_file","tool_input":{"path":"/etc/passwd"}}`
	pid := w.warmUp(deny)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
	socks, _ := filepath.Glob(filepath.Join(w.rdv, "hook-*.sock"))
	if len(socks) != 1 {
		t.Fatalf("want the killed process's socket left behind, got %v", socks)
	}
	code, out, by := w.event(deny)
	if by != 0 || code != 0 || permission(t, out) != "deny" {
		t.Fatalf("with a stale socket: decided by %d, exit %d %s", by, code, out)
	}
	if next := w.warmUp(deny); next == pid {
		t.Fatalf("still %d", pid)
	}
}

func TestAWarmProcessSurvivesGarbageOnItsSocket(t *testing.T) {
	w := newWarmSetup(t)
	ev := claudeEvent("write_file")
	pid := w.warmUp(ev)
	socks, _ := filepath.Glob(filepath.Join(w.rdv, "hook-*.sock"))
	if len(socks) != 1 {
		t.Fatalf("sockets: %v", socks)
	}
	for _, junk := range [][]byte{
		[]byte("GET / HTTP/1.1\r\n\r\n"),
		append([]byte(warmMagic()), 0xff, 0xff, 0xff, 0x7f), // a length far past the limit
		[]byte(warmMagic() + "\x05\x00\x00\x00ab"),          // shorter than it says
		nil,
	} {
		c, err := net.Dial("unix", socks[0])
		if err != nil {
			t.Fatal(err)
		}
		c.Write(junk)
		c.(*net.UnixConn).CloseWrite()
		answer, _ := readAll(c)
		c.Close()
		if len(answer) != 0 {
			t.Fatalf("garbage %q got an answer %q", junk, answer)
		}
	}
	if code, out, by := w.event(ev); by != pid || code != 0 || permission(t, out) != "ask" {
		t.Fatalf("after garbage: decided by %d (want %d), exit %d %s", by, pid, code, out)
	}
}

func TestAWarmProcessExitsWhenIdle(t *testing.T) {
	w := newWarmSetup(t)
	w.args[len(w.args)-1] = "300ms"
	pid := w.warmUp(claudeEvent("read_text_file"))
	waitGone(t, pid)
	if socks, _ := filepath.Glob(filepath.Join(w.rdv, "hook-*.sock")); len(socks) != 0 {
		t.Fatalf("an idle process left its socket: %v", socks)
	}
}

func TestWarmHooksRefuseARendezvousDirectoryOthersCanWrite(t *testing.T) {
	w := newWarmSetup(t)
	if err := os.Chmod(w.rdv, 0o777); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		code, out, by := w.event(`{"session_id":"c1","hook_event_name":"PreToolUse","tool_name":"mcp__fs__write_file","tool_input":{"path":"/etc/passwd"}}`)
		if by != 0 || code != 0 || permission(t, out) != "deny" {
			t.Fatalf("decided by %d, exit %d %s", by, code, out)
		}
	}
	if socks, _ := filepath.Glob(filepath.Join(w.rdv, "hook-*")); len(socks) != 0 {
		t.Fatalf("a socket in a directory others can write: %v", socks)
	}
}

// waitGone waits until process pid has exited (it is not our child).
func waitGone(t testing.TB, pid int) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if err := syscall.Kill(pid, 0); err != nil {
			return
		}
		if data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(data), ") Z ") {
			return // exited, waiting for its reaper
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("process %d still runs", pid)
}

func readAll(c net.Conn) ([]byte, error) {
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b bytes.Buffer
	_, err := b.ReadFrom(c)
	return b.Bytes(), err
}

// BenchmarkWarmProcessEvent is what the warm process spends on one event
// (hookstart_test.go's argguard event, in process, on a plugin runtime
// that compiled argguard already): everything but the hook process's own
// start and the socket.
func BenchmarkWarmProcessEvent(b *testing.B) {
	dir := b.TempDir()
	config, tools := filepath.Join(dir, "tw.toml"), filepath.Join(dir, "tools.json")
	if err := os.WriteFile(config, []byte(hookStartConfig+hookStartArgguard), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(tools, []byte(hookStartTools), 0o600); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	args := []string{"--config", config, "--state-dir", filepath.Join(dir, "state"), "--tools", tools}
	b.ReportAllocs()
	for i := range b.N + 1 {
		if i == 1 {
			b.ResetTimer() // the first event compiled argguard
		}
		var stdout, stderr bytes.Buffer
		e := &env{stdin: strings.NewReader(hookStartEvent), stdout: &stdout, stderr: &stderr, getenv: os.Getenv, pluginRuntime: rt}
		f, code, ok := parseHookFlags(e, args)
		if ok {
			code = decideHook(e, f)
		}
		if code != 0 || !strings.Contains(stdout.String(), `"permissionDecision":"deny"`) {
			b.Fatalf("exit %d %s %s", code, stdout.String(), stderr.String())
		}
	}
}

// otherUserProgram is a raw warm-protocol peer the tests run as another
// user: "serve SOCK" answers one event on SOCK with a forged allow,
// "dial SOCK" sends one event to SOCK and prints how many bytes came back.
const otherUserProgram = `package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
)

func frame(parts ...[]byte) []byte {
	out := []byte("MAGIC")
	for _, p := range parts {
		out = binary.LittleEndian.AppendUint32(out, uint32(len(p)))
		out = append(out, p...)
	}
	return out
}

func main() {
	switch os.Args[1] {
	case "serve":
		ln, err := net.Listen("unix", os.Args[2])
		if err != nil {
			panic(err)
		}
		os.Chmod(os.Args[2], 0o777)
		fmt.Println("listening")
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.ReadAll(io.LimitReader(c, 1<<20))
			allow := []byte(` + "`" + `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}` + "`" + `)
			head := binary.LittleEndian.AppendUint32([]byte("MAGIC"), 0)
			head = binary.LittleEndian.AppendUint32(head, 1)
			out := append(head, frame(allow)[4:]...)
			out = append(out, 0, 0, 0, 0)
			c.Write(out)
			c.Close()
		}
	case "dial":
		c, err := net.Dial("unix", os.Args[2])
		if err != nil {
			fmt.Println("dial:", err)
			return
		}
		c.Write(frame([]byte(` + "`" + `{"session_id":"c1","tool_name":"mcp__fs__read_text_file"}` + "`" + `)))
		c.(*net.UnixConn).CloseWrite()
		b, _ := io.ReadAll(c)
		fmt.Println("answer bytes:", len(b))
	}
}
`

// buildOtherUserProgram builds otherUserProgram where user nobody can run
// it, and returns a command running it as nobody; it skips the test when
// this process cannot switch users (not root).
func buildOtherUserProgram(t *testing.T) func(args ...string) *exec.Cmd {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("running a peer as another user needs root")
	}
	dir, err := os.MkdirTemp("", "twpeer")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"go.mod": "module peer\n\ngo 1.22\n", "main.go": strings.ReplaceAll(otherUserProgram, "MAGIC", warmMagic())} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command("go", "build", "-o", "peer", ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the peer: %v\n%s", err, out)
	}
	peer := filepath.Join(dir, "peer")
	return func(args ...string) *exec.Cmd {
		cmd := exec.Command(peer, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return cmd
	}
}

// A warm process answers only its own user, even on a socket others can
// reach; and a hook never believes a socket another user serves, even one
// that answers in the protocol with an allow.
func TestWarmSocketsServeAndBelieveOnlyTheirOwnUser(t *testing.T) {
	asNobody := buildOtherUserProgram(t)
	w := newWarmSetup(t)
	ev := claudeEvent("write_file")
	pid := w.warmUp(ev)
	socks, _ := filepath.Glob(filepath.Join(w.rdv, "hook-*.sock"))
	if len(socks) != 1 {
		t.Fatalf("sockets: %v", socks)
	}
	// Open the way to the socket for everyone.
	if err := os.Chmod(w.rdv, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(socks[0], 0o777); err != nil {
		t.Fatal(err)
	}
	out, err := asNobody("dial", socks[0]).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "answer bytes: 0") {
		t.Fatalf("another user's event got an answer: %s %v", out, err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the warm process died of it: %v", err)
	}

	// Now another user serves the socket this invocation would use.
	stopWarmProcesses(t, w.rdv)
	if err := os.Chmod(w.rdv, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Remove(socks[0])
	server := asNobody("serve", socks[0])
	stdout, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "listening\n" {
		t.Fatalf("peer: %q", line)
	}
	deny := `{"session_id":"c1","hook_event_name":"PreToolUse","tool_name":"mcp__fs__write_file","tool_input":{"path":"/etc/passwd"}}`
	// toolwarden refuses the directory, now open to others, and the uid
	// of the socket's other end.
	code, answer, stderr := runHookProcess(t, "", w.env, deny, w.bin, w.args...)
	if code != 0 || permission(t, answer) != "deny" || strings.Contains(stderr, "decided by the warm process") {
		t.Errorf("toolwarden hook --warm believed another user's socket: exit %d %s\n%s", code, answer, stderr)
	}
}

// An ask the warm process waits on in the approval inbox is withdrawn as
// soon as the hook that asked is gone (killed, or given up on by the
// agent), instead of waiting there, answerable, for its whole timeout.
func TestAWarmAskIsWithdrawnWhenItsHookGoesAway(t *testing.T) {
	w := newWarmSetup(t)
	w.writeConfig("approval_channel = \"inbox\"\n" + warmConfig)
	w.warmUp(claudeEvent("read_text_file"))
	asks := w.asks
	hook, exited := w.startAsking(w.bin, w.args...)
	if err := hook.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	for i := 0; len(asks()) > 0; i++ {
		if i == 250 {
			t.Fatalf("the ask outlived its hook: %v", asks())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// An ask a warm process posts for a hook names that hook as the asker:
// the inbox shows the process the agent ran (the
// human's way to tell which agent asks), and the ask is stale once that
// process is gone. Before, every ask named the warm process.
func TestAWarmAskNamesTheHookThatAsked(t *testing.T) {
	w := newWarmSetup(t)
	w.writeConfig("approval_channel = \"inbox\"\n" + warmConfig)
	warmPid := w.warmUp(claudeEvent("read_text_file"))
	for _, c := range []struct {
		name string
		bin  string
		args []string
	}{
		{"toolwarden hook --warm", w.bin, w.args},
	} {
		hook, exited := w.startAsking(c.bin, c.args...)
		asks, err := inbox.List(w.rdv)
		if err != nil || len(asks) != 1 {
			t.Fatalf("%s: asks %v, %v", c.name, asks, err)
		}
		if got := asks[0].PID; got != hook.Process.Pid {
			t.Errorf("%s: the ask names pid %d; the hook is %d, the warm process %d", c.name, got, hook.Process.Pid, warmPid)
		}
		if err := inbox.Respond(w.rdv, asks[0].ID, "deny", "test"); err != nil {
			t.Fatal(err)
		}
		if err := <-exited; err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
}

// A plugin's log lines reach the hook's stderr whether the hook decides
// the event itself or a warm process does (it hands them back with the
// answer): the same lines, the same cap. Before, a warm process wrote them
// to its own stderr, which nobody reads.
func TestPluginLogLinesOfAWarmEventReachTheHook(t *testing.T) {
	w := newWarmSetup(t)
	chatty, err := filepath.Abs(filepath.Join("..", "..", "internal", "plugin", "testdata", "wat", "chatty.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	w.writeConfig(warmConfig + fmt.Sprintf("\n[policies.chatty]\nwasm = %q\n", chatty))
	w.warmUp(claudeEvent("read_text_file"))
	ev := claudeEvent("write_file")
	_, _, fresh := runHookProcess(t, "", w.env, ev, w.bin, w.args[:len(w.args)-3]...) // without --warm
	_, _, warmed := runHookProcess(t, "", w.env, ev, w.bin, w.args...)
	if pid, _ := warmPID([]byte(warmed)); pid == 0 {
		t.Fatalf("no warm process decided the event:\n%s", warmed)
	}
	// What the plugin wrote to WASI stdout and stderr, and its log lines
	// up to the 32 an event keeps, then a note of the rest.
	want := []string{`level=INFO msg="hello from stdout" plugin=chatty`, `level=WARN msg="trouble on stderr" plugin=chatty`}
	for range 30 {
		want = append(want, `level=INFO msg="log line" plugin=chatty`)
	}
	want = append(want, `level=WARN msg="plugin log messages dropped" plugin=chatty dropped=10`)
	for name, stderr := range map[string]string{"the hook": fresh, "a warm process": warmed} {
		var got []string
		for _, line := range strings.Split(stderr, "\n") {
			if _, rest, ok := strings.Cut(line, " level="); ok && strings.Contains(rest, "plugin=chatty") {
				got = append(got, "level="+rest)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("decided by %s, the hook's stderr has the plugin's lines\n%s\nwant\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// When there is no warm process, toolwarden hook --warm decides the event
// in the process the agent ran: killing the hook, as an agent does at its
// timeout, ends the wait in the inbox too, and leaves no hook behind.
func TestAColdWarmHookLeavesNoHookBehindWhenKilled(t *testing.T) {
	w := newWarmSetup(t)
	w.writeConfig("approval_channel = \"inbox\"\n" + warmConfig)
	hook, exited := w.startAsking(w.bin, w.args...)
	if err := hook.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		environ, _ := os.ReadFile(filepath.Join(p, "environ"))
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		if bytes.Contains(append([]byte{0}, environ...), []byte("\x00"+inbox.EnvRuntimeDir+"="+w.rdv+"\x00")) &&
			bytes.Contains(cmdline, []byte("\x00hook\x00")) {
			t.Fatalf("a toolwarden hook outlived the killed hook: %s %q", p, cmdline)
		}
	}
}

// asks lists the pending asks in w's approval inbox.
func (w *warmSetup) asks() []string {
	files, _ := filepath.Glob(filepath.Join(w.rdv, "asks", "*.json"))
	return files
}

// startAsking starts bin args with an event that asks in the inbox, and
// returns once the ask is there; exited reports the process's end.
func (w *warmSetup) startAsking(bin string, args ...string) (*exec.Cmd, <-chan error) {
	w.t.Helper()
	hook := exec.Command(bin, args...)
	hook.Env = w.env
	hook.Stdin = strings.NewReader(claudeEvent("write_file"))
	var out bytes.Buffer
	hook.Stdout, hook.Stderr = &out, &out
	if err := hook.Start(); err != nil {
		w.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- hook.Wait() }()
	for len(w.asks()) == 0 {
		select {
		case err := <-exited:
			w.t.Fatalf("the hook ended before asking: %v\n%s", err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return hook, exited
}
