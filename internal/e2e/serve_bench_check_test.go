package e2e

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// The serve benchmarks' "no call answered twice" holds only if their check
// can fail: a message the upstream has echoed before is a call run twice,
// and an answer seen twice is a call answered twice. (The check caught
// exactly this once, when two loads reused their message numbers.)
func TestServeBenchmarkCheckCatchesACallRunTwice(t *testing.T) {
	t.Parallel()
	addr := benchFreeAddr(t)
	startBenchProc(t, "upstream testserver", testServer, "-http", addr, "-count-echo", "-state", t.TempDir())
	benchWaitDial(t, addr)
	c := benchCase{"direct", "http://" + addr + "/mcp", "echo", 0}
	s, err := openBenchSession(testContext(t), c.url, benchHTTPClient(1), mcp.ProtocolVersion20251125)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	l := &benchLoad{c: c}
	l.reset()
	if _, ok := l.callWith("once", s); !ok || l.errs != 0 {
		t.Fatalf("a first call was flagged: %s", l.firstErr)
	}
	if _, ok := l.callWith("once", s); ok || l.errs != 1 || !strings.Contains(l.firstErr, "ran 2 times upstream") {
		t.Fatalf("a message echoed twice was not flagged as a call run twice: ok=%v errs=%d first=%q", ok, l.errs, l.firstErr)
	}
	if n := l.twice(); n != 1 {
		t.Fatalf("an answer seen twice was not counted: twice() = %d", n)
	}
}
