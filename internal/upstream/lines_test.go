package upstream

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
)

// readAll reads every line of in with a limit of max bytes, the reader's
// buffer at its smallest (16 bytes) so short limits still span fragments.
func readAll(t *testing.T, in string, max int) (lines []string, overs []*oversized) {
	t.Helper()
	lr := newLineReader(bufio.NewReaderSize(strings.NewReader(in), 16), max)
	for {
		line, over, err := lr.next()
		if over != nil {
			overs = append(overs, over)
			lines = append(lines, "<over>")
		} else if len(line) > 0 {
			lines = append(lines, string(line))
		}
		if err == io.EOF {
			return lines, overs
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestLinesUpToTheLimitArriveWholeAndLongerOnesAreDiscarded(t *testing.T) {
	t.Parallel()
	payload := strings.Repeat("x", 100)
	mcpGo := `{"jsonrpc":"2.0","id":"tw-7","result":{"content":[{"type":"text","text":"` + payload + `"}]}}`
	ts := `{"result":{"content":[{"type":"text","text":"` + payload + `"}]},"jsonrpc":"2.0","id":"tw-8"}`
	short := `{"jsonrpc":"2.0","id":"tw-9","result":{}}`
	lines, overs := readAll(t, mcpGo+"\n"+ts+"\n"+short+"\n", len(mcpGo)-1)
	if len(lines) != 3 || lines[0] != "<over>" || lines[1] != "<over>" || lines[2] != short+"\n" {
		t.Fatalf("lines = %q", lines)
	}
	for i, want := range []struct {
		id   string
		size int
	}{{`"tw-7"`, len(mcpGo)}, {`"tw-8"`, len(ts)}} {
		if got := string(overs[i].id()); got != want.id || overs[i].size != want.size {
			t.Errorf("oversized %d: id %s size %d, want %s %d", i, got, overs[i].size, want.id, want.size)
		}
		if len(overs[i].head) > lineEdge || len(overs[i].tail) > 2*lineEdge {
			t.Errorf("oversized %d kept %d+%d bytes", i, len(overs[i].head), len(overs[i].tail))
		}
	}
	// At the limit exactly, the line passes.
	if lines, _ := readAll(t, mcpGo+"\n", len(mcpGo)); len(lines) != 1 || lines[0] != mcpGo+"\n" {
		t.Fatalf("a line at the limit: %q", lines)
	}
}

// An "id" inside the payload is never taken for the message's: a server
// could otherwise fail another call of its own with "too large".
func TestAnIDInsideAnOversizedPayloadIsNotTheMessagesID(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		`{"result":{"structuredContent":{"id":"tw-3"}}}`,
		`{"jsonrpc":"2.0","result":{"a":{"id":"tw-3"},"b":"` + strings.Repeat("y", 64) + `"}}`,
		`{"result":{"content":[],"x":{"id":"tw-3"}},"jsonrpc":"2.0"}`,
	} {
		_, overs := readAll(t, msg+"\n", 10)
		if len(overs) != 1 || overs[0].id() != nil {
			t.Errorf("%s: id %q", msg, overs[0].id())
		}
	}
	// The real id wins over a nested one at either end.
	_, overs := readAll(t, `{"result":{"x":{"id":"tw-3"}},"jsonrpc":"2.0","id":"tw-5"}`+"\n", 10)
	if got := string(overs[0].id()); got != `"tw-5"` {
		t.Errorf("id = %s, want \"tw-5\"", got)
	}
}

// A line of several chunks arrives byte for byte, and the chunks are let go.
func TestALineOfManyChunksArrivesByteForByte(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":"tw-1","result":{"content":[{"type":"text","text":"`)
	for i := 0; b.Len() < 3*readChunk+12345; i++ {
		b.WriteByte(byte('a' + i%26))
	}
	b.WriteString(`"}]}}`)
	want := b.String()
	lr := newLineReader(bufio.NewReaderSize(strings.NewReader(want+"\nnext\n"), 64<<10), 4*readChunk)
	line, over, err := lr.next()
	if err != nil || over != nil || string(line) != want+"\n" {
		t.Fatalf("long line: %d bytes, over %v, err %v", len(line), over, err)
	}
	if len(lr.chunks) != 0 {
		t.Fatalf("%d chunks kept after the line", len(lr.chunks))
	}
	if line, _, _ := lr.next(); string(line) != "next\n" {
		t.Fatalf("next line: %q", line)
	}
}
