package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchCase is one way a client reaches the upstream's echo tool: directly,
// through the byte-level reverse proxy, or through toolwarden serve.
type benchCase struct {
	name string
	url  string // the streamable HTTP endpoint
	tool string // echo; bench__echo behind serve, which names tools <server>__<tool>
	pid  int    // the process the case charges CPU and memory to: the upstream for direct, else the proxy
}

// serveBenchConfig is serve's default configuration with the one upstream.
// The per-principal rate limit is raised to the most the config takes: on
// loopback every caller is the one principal "local", and its default (20
// calls a second) would measure the limiter, not the gateway.
const serveBenchConfig = `
[mcp_servers.bench]
url = %q

[serve.rate_limit]
calls_per_second = 1000000
burst = 1000000
`

// startServeBench starts, each in its own process, the Go test server on
// streamable HTTP (counting each echo, so a call run twice shows), a
// reverse proxy in front of it and, when this build has the command,
// toolwarden serve in front of it; and returns the cases in that order.
// Separate processes keep each its own Go scheduler and heap, as in a
// deployment: the benchmark's thousand clients do not preempt the server's
// goroutines, and each process's CPU time and memory can be read alone.
func startServeBench(b *testing.B) []benchCase {
	b.Helper()
	upAddr := benchFreeAddr(b)
	up := startBenchProc(b, "upstream testserver", testServer, "-http", upAddr, "-count-echo", "-state", b.TempDir())
	benchWaitDial(b, upAddr)
	rpAddr := benchFreeAddr(b)
	rp := startBenchProc(b, "reverse proxy", testServer, "-http", rpAddr, "-reverse-proxy", "http://"+upAddr)
	benchWaitDial(b, rpAddr)
	cases := []benchCase{
		{"direct", "http://" + upAddr + "/mcp", "echo", up.Process.Pid},
		{"rproxy", "http://" + rpAddr + "/mcp", "echo", rp.Process.Pid},
	}
	if !benchServeBuilt(b) {
		b.Log("this build has no `toolwarden serve`: measuring direct and rproxy only")
		return cases
	}
	cfg := writeFile(b, "serve.toml", fmt.Sprintf(serveBenchConfig, "http://"+upAddr+"/mcp"))
	url, pid := benchStartServe(b, twBin, cfg)
	cases = append(cases, benchCase{"serve", url, "bench__echo", pid})
	if alt := os.Getenv("TOOLWARDEN_BENCH_SERVE_B"); alt != "" {
		// A second build (or flags) beside the first in the same run: the
		// fair way to see what a change to serve buys on a noisy machine.
		url, pid := benchStartServe(b, alt, cfg, strings.Fields(os.Getenv("TOOLWARDEN_BENCH_SERVE_B_ARGS"))...)
		cases = append(cases, benchCase{"serveB", url, "bench__echo", pid})
	}
	return cases
}

// benchServeBuilt reports whether the binary under test has the serve command.
func benchServeBuilt(b *testing.B) bool {
	out, _ := exec.Command(twBin, "serve", "--help").CombinedOutput()
	return strings.Contains(string(out), "--listen")
}

// benchStartServe runs bin's serve on a port of its choosing and returns
// the URL its one start-up line names, and its pid.
func benchStartServe(b *testing.B, bin, cfg string, extra ...string) (string, int) {
	b.Helper()
	s := launchServe(b, bin, nil, append([]string{"--listen", "127.0.0.1:0", "--config", cfg}, extra...)...)
	s.waitListening(b)
	return s.url, s.cmd.Process.Pid
}

// startBenchProc starts a process for the whole benchmark, its stderr shown
// if the benchmark fails.
func startBenchProc(b testing.TB, name, bin string, args ...string) *exec.Cmd {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stderr = newLog(b, name)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// benchFreeAddr is a loopback address no one listens on at the moment.
func benchFreeAddr(b testing.TB) string {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func benchWaitDial(b testing.TB, addr string) {
	b.Helper()
	eventually(b, 10*time.Second, addr+" to listen", func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// benchProcCPU is the CPU time (user + system) process pid has used so far.
func benchProcCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("reading the CPU time of process %d: %v", pid, err)
	}
	// Fields after the command name, which is in parentheses and may hold
	// spaces: state is field 3, utime 14, stime 15 (proc(5)).
	rest := string(raw[strings.LastIndexByte(string(raw), ')')+2:])
	f := strings.Fields(rest)
	utime, err1 := strconv.ParseInt(f[14-3], 10, 64)
	stime, err2 := strconv.ParseInt(f[15-3], 10, 64)
	if err1 != nil || err2 != nil {
		b.Fatalf("process %d: unreadable /proc stat %q", pid, raw)
	}
	const userHZ = 100 // clock ticks a second on Linux (sysconf(_SC_CLK_TCK))
	return time.Duration(utime+stime) * time.Second / userHZ
}

// benchProcRSSKiB is the resident memory of process pid (VmRSS), in KiB.
func benchProcRSSKiB(b *testing.B, pid int) int64 {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatalf("reading the memory of process %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("process %d: unreadable VmRSS %q", pid, line)
			}
			return kib
		}
	}
	b.Fatalf("process %d: no VmRSS in /proc status", pid)
	return 0
}

// benchProcFiles is how many files process pid has open.
func benchProcFiles(b *testing.B, pid int) int {
	b.Helper()
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		b.Fatalf("listing the files of process %d: %v", pid, err)
	}
	return len(ents)
}
