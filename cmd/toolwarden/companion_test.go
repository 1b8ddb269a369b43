package main

import (
	"bufio"
	"bytes"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
)

// built holds toolwarden, toolwarden-mcp, toolwarden-hook and the test MCP
// server, built once per test binary into one folder, as go install puts
// them.
var built struct {
	once                                    sync.Once
	dir, tw, companion, hookClient, testsrv string
	err                                     error
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
		built.companion = filepath.Join(dir, cli.Companion)
		built.testsrv = filepath.Join(dir, "testserver")
		built.hookClient = filepath.Join(dir, "toolwarden-hook")
		cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/toolwarden", "./cmd/"+cli.Companion, "./cmd/toolwarden-hook", "./sdk/internal/testserver")
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

// TestMain points the in-process commands that hand over to the companion
// (wrap, proxy, tools: see cli_test.go) at this run's build of it.
func TestMain(m *testing.M) {
	companionPath = func() (string, error) {
		if err := buildBinaries(); err != nil {
			return "", err
		}
		return built.companion, nil
	}
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// mcpLinkedPackages are what a hook event must not pay for: mcp-go's
// server and client, the JSON-schema library whose init compiles its
// metaschemas (about 4 ms and 1.7 MB per process), and mcp-go's types with
// the schema library they import (0.2 ms of package init).
var mcpLinkedPackages = []string{
	"github.com/mark3labs/mcp-go/server",
	"github.com/mark3labs/mcp-go/client",
	"github.com/santhosh-tekuri/jsonschema",
	"github.com/mark3labs/mcp-go/mcp",
	"github.com/google/jsonschema-go/jsonschema",
}

func linkedForbidden(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", pkg)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var bad []string
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range mcpLinkedPackages {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				bad = append(bad, dep)
			}
		}
	}
	return bad
}

// toolwarden (hook, check, validate...) links no MCP client or server;
// the companion does, which shows the check can see them.
func TestToolwardenLinksNoMCPClientOrServer(t *testing.T) {
	t.Parallel()
	if bad := linkedForbidden(t, "."); len(bad) > 0 {
		t.Errorf("toolwarden links %v: move what needs it to %s (docs/RATIONALE.md, \"Process start\")", bad, cli.Companion)
	}
	if got := linkedForbidden(t, "../"+cli.Companion); len(got) < 2 {
		t.Errorf("%s links only %v of %v: the check above cannot be trusted", cli.Companion, got, mcpLinkedPackages)
	}
	// The binary itself, as built: the modules Go recorded in it.
	binaries(t)
	for _, c := range []struct {
		bin  string
		want bool
	}{{built.tw, false}, {built.companion, true}} {
		bi, err := buildinfo.ReadFile(c.bin)
		if err != nil {
			t.Fatal(err)
		}
		has := false
		for _, d := range bi.Deps {
			has = has || d.Path == "github.com/santhosh-tekuri/jsonschema/v6"
		}
		if has != c.want {
			t.Errorf("%s: links santhosh-tekuri/jsonschema: %v, want %v", filepath.Base(c.bin), has, c.want)
		}
	}
}

// isolated is an environment for a real binary that writes nothing of
// the user's: its own HOME, config, cache and catalog folders.
func isolated(t *testing.T, path string) []string {
	t.Helper()
	d := t.TempDir()
	return []string{"HOME=" + d, "XDG_CONFIG_HOME=" + filepath.Join(d, "config"), "XDG_CACHE_HOME=" + filepath.Join(d, "cache"),
		"TOOLWARDEN_CATALOG=" + filepath.Join(d, "catalog"), "PATH=" + path}
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

// logTime is the time stamp of a log line, which differs between runs.
var logTime = regexp.MustCompile(`time=\S+ `)

// `toolwarden wrap|proxy|tools ...` is the companion's run, byte for byte:
// exit status, stdout and stderr.
func TestCompanionCommandsAnswerThroughToolwardenAsThemselves(t *testing.T) {
	t.Parallel()
	binaries(t)
	env := isolated(t, "/usr/bin:/bin")
	approvals := filepath.Join(t.TempDir(), "a.json")
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"help goes to stdout with exit 0", []string{"wrap", "--help"}, exitOK},
		{"bad usage is exit 2 with one line", []string{"wrap"}, exitUsage},
		{"a bad flag is exit 2", []string{"proxy", "--no-such-flag"}, exitUsage},
		{"a server that cannot start is exit 1", []string{"wrap", "--approvals", approvals, "--", "/no/such/mcp-server"}, exitError},
		{"a subcommand's help", []string{"tools", "sync", "--help"}, exitOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			via := runBin(t, env, "", built.tw, c.args...)
			direct := runBin(t, env, "", built.companion, c.args...)
			via.stderr, direct.stderr = logTime.ReplaceAllString(via.stderr, ""), logTime.ReplaceAllString(direct.stderr, "")
			if via.code != c.code {
				t.Errorf("toolwarden %v: exit %d, want %d\n%s", c.args, via.code, c.code, via.stderr)
			}
			if via != direct {
				t.Errorf("toolwarden %v differs from %s:\nvia:    %+v\ndirect: %+v", c.args, cli.Companion, via, direct)
			}
		})
	}
}

// A whole MCP session through `toolwarden wrap`: the client's stdio is the
// companion's, in the same process (the server's parent is the pid the
// agent started), and SIGTERM to that pid reaches the companion's own
// shutdown, which exits rather than dying of the signal.
func TestToolwardenWrapIsTheCompanionInTheSameProcess(t *testing.T) {
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
		t.Errorf("the server's parent is pid %d, not the toolwarden process %d: the companion ran as a child", got, cmd.Process.Pid)
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
		t.Errorf("toolwarden wrap died of the signal (%v) instead of the companion shutting down", cmd.ProcessState)
	}
}

// Without the companion, the commands that need it say what is missing
// and how to install it; with it on PATH instead of next to toolwarden,
// they run.
func TestCompanionIsFoundNextToToolwardenThenOnPath(t *testing.T) {
	t.Parallel()
	binaries(t)
	alone := t.TempDir()
	tw := filepath.Join(alone, "toolwarden")
	copyFile(t, built.tw, tw)
	for _, args := range [][]string{{"wrap", "--", "srv"}, {"proxy"}, {"tools", "sync"}, {"wrap", "--help"}} {
		r := runBin(t, isolated(t, t.TempDir()), "", tw, args...)
		if r.code != exitError || r.stdout != "" || !strings.Contains(r.stderr, "toolwarden "+args[0]+": "+cli.Companion+" is not installed (looked in "+alone+" and PATH)") ||
			!strings.Contains(r.stderr, "go install github.com/toolwarden/toolwarden/cmd/"+cli.Companion+"@") {
			t.Errorf("toolwarden %v without the companion: exit %d, stderr:\n%s", args, r.code, r.stderr)
		}
	}
	// The lean commands need nothing else.
	if r := runBin(t, isolated(t, t.TempDir()), "", tw, "validate"); r.code != exitOK {
		t.Errorf("validate without the companion: exit %d\n%s", r.code, r.stderr)
	}
	if r := runBin(t, isolated(t, built.dir), "", tw, "wrap", "--help"); r.code != exitOK || !strings.Contains(r.stdout, "usage: toolwarden wrap") {
		t.Errorf("toolwarden wrap --help with the companion on PATH: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
