package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// built holds toolwarden and the test MCP server, built once per test
// binary into one folder.
var built struct {
	once             sync.Once
	dir, tw, testsrv string
	err              error
}

func buildBinaries() error {
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "toolwarden-bins-")
		if err != nil {
			built.err = err
			return
		}
		built.dir = dir
		built.tw = filepath.Join(dir, "toolwarden")
		built.testsrv = filepath.Join(dir, "testserver")
		cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/toolwarden", "./internal/testserver")
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	return built.err
}

func binaries(t *testing.T) {
	t.Helper()
	if err := buildBinaries(); err != nil {
		t.Fatal(err)
	}
}

// TestMain removes the binaries the tests built.
func TestMain(m *testing.M) {
	code := runTests(m)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// runTests runs the tests with HOME in a folder of their own: a command
// run in process with no HOME of its own falls back to the process's, and
// must not write the user's audit log, state or config. The caches the
// tests share (Go's and the compiled plugins') stay where they were.
func runTests(m *testing.M) int {
	home, errH := os.UserHomeDir()
	cache, errC := os.UserCacheDir()
	tmp, err := os.MkdirTemp("", "toolwarden-cmd-home-")
	if errH != nil || errC != nil || err != nil {
		return m.Run()
	}
	defer os.RemoveAll(tmp)
	for k, v := range map[string]string{
		"GOPATH": filepath.Join(home, "go"), "GOCACHE": filepath.Join(cache, "go-build"),
		"XDG_CACHE_HOME": cache,
	} {
		if os.Getenv(k) == "" {
			os.Setenv(k, v)
		}
	}
	os.Setenv("HOME", tmp)
	return m.Run()
}

// isolated is an environment for a real binary that writes nothing of
// the user's: its own HOME, config, cache and catalog folders.
func isolated(t *testing.T, path string) []string {
	t.Helper()
	d := t.TempDir()
	return []string{"HOME=" + d, "XDG_CONFIG_HOME=" + filepath.Join(d, "config"), "XDG_CACHE_HOME=" + filepath.Join(d, "cache"),
		"TOOLWARDEN_CATALOG=" + filepath.Join(d, "catalog"), "TOOLWARDEN_SYSTEM_CONFIG_DIR=" + filepath.Join(d, "etc"), "PATH=" + path}
}

type ran struct {
	code           int
	stdout, stderr string
}

func runBin(t *testing.T, env []string, stdin string, bin string, args ...string) ran {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return ran{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

// wrap, proxy and tools are commands of the one binary: each answers with
// its own exit status and help, through the real program.
func TestWrapProxyAndToolsAnswerThroughTheOneBinary(t *testing.T) {
	t.Parallel()
	binaries(t)
	env := isolated(t, "/usr/bin:/bin")
	approvals := filepath.Join(t.TempDir(), "a.json")
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"help goes to stdout with exit 0", []string{"wrap", "--help"}, exitOK, "usage: toolwarden wrap"},
		{"bad usage is exit 2 with one line", []string{"wrap"}, exitUsage, "toolwarden wrap"},
		{"a bad flag is exit 2", []string{"proxy", "--no-such-flag"}, exitUsage, "no-such-flag"},
		{"a server that cannot start is exit 1", []string{"wrap", "--approvals", approvals, "--", "/no/such/mcp-server"}, exitError, "/no/such/mcp-server"},
		{"a subcommand's help", []string{"tools", "sync", "--help"}, exitOK, "usage: toolwarden tools sync"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runBin(t, env, "", built.tw, c.args...)
			if r.code != c.code || !strings.Contains(r.stdout+r.stderr, c.want) {
				t.Errorf("toolwarden %v: exit %d, want %d with %q\nstdout: %s\nstderr: %s", c.args, r.code, c.code, c.want, r.stdout, r.stderr)
			}
		})
	}
}

// `go run ./cmd/toolwarden wrap` works: there is no second program to
// find, of this build or another.
func TestGoRunToolwardenWrapNeedsNoOtherProgram(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	cmd := exec.Command("go", "run", ".", "wrap", "--help")
	cmd.Env = append(os.Environ(), isolated(t, os.Getenv("PATH"))...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "usage: toolwarden wrap") {
		t.Fatalf("go run . wrap --help: %v\n%s", err, out)
	}
}

// A whole MCP session through `toolwarden wrap`: the server's parent is
// the pid the agent started, and SIGTERM to that pid reaches wrap's own
// shutdown, which exits rather than dying of the signal.
func TestToolwardenWrapServesTheSessionItselfAndShutsDownOnSIGTERM(t *testing.T) {
	t.Parallel()
	binaries(t)
	dir := t.TempDir()
	ppidFile := filepath.Join(dir, "ppid")
	cmd := exec.Command(built.tw, "wrap", "--app", "t", "--approvals", filepath.Join(dir, "a.json"), "--",
		"/bin/sh", "-c", `echo $PPID > "$0"; exec "$1"`, ppidFile, built.testsrv)
	cmd.Env = isolated(t, "/usr/bin:/bin")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdoutPipe)
	lines.Buffer(nil, 1<<20)
	ask := func(id int, method, params string) map[string]any {
		t.Helper()
		if _, err := fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() {
			var m map[string]any
			if json.Unmarshal(lines.Bytes(), &m) == nil && m["id"] == float64(id) {
				return m
			}
		}
		t.Fatalf("no answer to %s: %v\nstderr: %s", method, lines.Err(), stderr.String())
		return nil
	}
	ask(1, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	res := ask(2, "tools/call", `{"name":"echo","arguments":{"message":"through toolwarden"}}`)
	if b, _ := json.Marshal(res); !strings.Contains(string(b), "through toolwarden") {
		t.Fatalf("echo through toolwarden wrap: %s\nstderr: %s", b, stderr.String())
	}
	ppid, err := os.ReadFile(ppidFile)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := strconv.Atoi(strings.TrimSpace(string(ppid))); got != cmd.Process.Pid {
		t.Errorf("the server's parent is pid %d, not the toolwarden process %d: wrap ran as a child", got, cmd.Process.Pid)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, _ = io.Copy(io.Discard, stdoutPipe); done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("SIGTERM did not stop toolwarden wrap\nstderr: %s", stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signaled() {
		t.Errorf("toolwarden wrap died of the signal (%v) instead of shutting down", cmd.ProcessState)
	}
}
