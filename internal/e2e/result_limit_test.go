package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/proxy"
)

// tsServer is the command line of internal/e2e/testdata/tsserver.mjs, a server
// on the official TypeScript SDK, and the environment wrap needs to pass
// it (where the SDK is).
func tsServer(t *testing.T) (args []string, env []string) {
	t.Helper()
	sdk := nodeSDK(t)
	return []string{"node", filepath.Join(root, "internal", "e2e", "testdata", "tsserver.mjs")}, append(os.Environ(), "MCP_SDK="+sdk)
}

// startWrapEnv starts wrap in front of upstream with the environment env.
func startWrapEnv(t *testing.T, env []string, upstream ...string) *rawClient {
	t.Helper()
	cmd := exec.Command(twBin, wrapArgs(t, "up", nil, upstream...)...)
	cmd.Env = env
	return startRawCmd(t, cmd)
}

// A result over the limit is not relayed: the call gets a tool error that
// says what happened and how to raise the limit, the oversized answer is
// discarded, and the proxy serves the next call. Both orders of a
// response's members are covered: mcp-go writes the id before the result,
// the TypeScript SDK after it.
func TestAResultOverTheLimitIsAClearToolErrorAndTheNextCallWorks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		up   func(t *testing.T) ([]string, []string)
	}{
		{"mcp-go server (id first)", func(t *testing.T) ([]string, []string) {
			return []string{testServer, "-state", t.TempDir()}, os.Environ()
		}},
		{"TypeScript SDK server (id last)", tsServer},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up, env := tc.up(t)
			c := startWrapEnv(t, env, up...)
			c.initialize("")
			over := proxy.DefaultMaxResultBytes + 1
			r := decodeCall(t, c.call("tools/call", map[string]any{"name": "big", "arguments": map[string]any{"n": over}}))
			if !r.IsError {
				t.Fatalf("a result of %d bytes was relayed (%d bytes of text); want a tool error", over, len(r.Text))
			}
			for _, want := range []string{"big ran", "over toolwarden's limit of " + strconv.Itoa(proxy.DefaultMaxResultBytes) + " bytes", "discarded", "--max-result-bytes"} {
				if !strings.Contains(r.Text, want) {
					t.Errorf("the error does not say %q: %s", want, r.Text)
				}
			}
			if r := decodeCall(t, c.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"message": "still here"}})); r.IsError || r.Text != "echo: still here" {
				t.Fatalf("the next call: %+v", r)
			}
		})
	}
}

// vmHWM is the peak resident memory of process pid, in bytes, from
// /proc/<pid>/status.
func vmHWM(t *testing.T, pid int) int {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc here to read peak memory from: %v", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			if err != nil {
				t.Fatalf("VmHWM: %q", v)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// A result just under the limit is relayed whole, and wrap holds it about
// once: its peak memory grows by at most 1.5 times the result's size (it
// grew by four times before results were read in chunks outside the heap
// and relayed without a copy). Results of that size are relayed one after
// the other without the peak climbing.
func TestAResultAtTheLimitIsHeldAboutOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector shadows every allocation; memory is measured without it")
	}
	t.Parallel()
	c := startRaw(t, twBin, wrapArgs(t, "up", nil, testServer, "-state", t.TempDir())...)
	c.initialize("")
	c.call("tools/list", map[string]any{})
	before := vmHWM(t, c.cmd.Process.Pid)
	n := proxy.DefaultMaxResultBytes - 1024 // the rest of the line is the envelope
	for i := range 3 {
		r := decodeCall(t, c.call("tools/call", map[string]any{"name": "big", "arguments": map[string]any{"n": n}}))
		if r.IsError || len(r.Text) != n || strings.Trim(r.Text, "x") != "" {
			t.Fatalf("call %d: a result of %d bytes under the limit came back as %d bytes (error %v): %.200s", i, n, len(r.Text), r.IsError, r.Text)
		}
	}
	peak := vmHWM(t, c.cmd.Process.Pid)
	growth := peak - before
	t.Logf("peak RSS %d MiB, %d MiB before the calls; growth %.2f times the result (%d MiB)", peak>>20, before>>20, float64(growth)/float64(n), n>>20)
	if limit := n + n/2; growth > limit {
		t.Fatalf("wrap's peak memory grew by %d MiB for results of %d MiB: more than 1.5 times the result", growth>>20, n>>20)
	}
}

// --max-result-bytes is the limit the error names: below it a result is
// relayed, above it refused, whatever the default.
func TestMaxResultBytesSetsTheLimit(t *testing.T) {
	t.Parallel()
	const n = 200_000
	for _, tc := range []struct {
		limit   int
		refused bool
	}{{100_000, true}, {300_000, false}} {
		t.Run(strconv.Itoa(tc.limit), func(t *testing.T) {
			t.Parallel()
			args := append([]string{"wrap", "--max-result-bytes", strconv.Itoa(tc.limit)}, wrapArgs(t, "up", nil, testServer, "-state", t.TempDir())[1:]...)
			c := startRaw(t, twBin, args...)
			c.initialize("")
			r := decodeCall(t, c.call("tools/call", map[string]any{"name": "big", "arguments": map[string]any{"n": n}}))
			switch {
			case tc.refused && (!r.IsError || !strings.Contains(r.Text, "limit of "+strconv.Itoa(tc.limit)+" bytes")):
				t.Fatalf("a result of %d bytes under a limit of %d: error %v, %.200s", n, tc.limit, r.IsError, r.Text)
			case !tc.refused && (r.IsError || len(r.Text) != n):
				t.Fatalf("a result of %d bytes under a limit of %d: error %v, %d bytes: %.200s", n, tc.limit, r.IsError, len(r.Text), r.Text)
			}
		})
	}
}
