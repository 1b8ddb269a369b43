package upstream

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// FuzzLineReader: whatever a server writes, lineReader hands out its lines
// byte for byte or, for a line over the limit, its size; it never panics,
// and what it keeps of an oversized line stays bounded.
func FuzzLineReader(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":"tw-7","result":{"content":[]}}`+"\n"+`{"id":1}`+"\n"), uint8(20))
	f.Add([]byte(`{"result":{"x":{"id":"tw-3"}},"jsonrpc":"2.0","id":"tw-5"}`+"\r\n\n"), uint8(10))
	f.Add([]byte("no newline at the end"), uint8(5))
	f.Fuzz(func(t *testing.T, in []byte, max8 uint8) {
		max := int(max8) + 1
		lr := newLineReader(bufio.NewReaderSize(bytes.NewReader(in), 16), max)
		rest := in
		for i := 0; ; i++ {
			if i > len(in)+1 {
				t.Fatal("the reader does not reach the end")
			}
			line, over, err := lr.next()
			n := bytes.IndexByte(rest, '\n') + 1
			if n == 0 {
				n = len(rest)
			}
			want := rest[:n]
			if len(want) > 0 && over == nil && len(line) == 0 {
				t.Fatalf("line %q lost", want)
			}
			switch {
			case over != nil:
				if len(want) <= max {
					t.Fatalf("line %q of %d bytes taken as over the limit %d", want, len(want), max)
				}
				if len(over.head) > lineEdge || len(over.tail) > 2*lineEdge {
					t.Fatalf("kept %d+%d bytes", len(over.head), len(over.tail))
				}
				if over.size > len(want) {
					t.Fatalf("size %d of a line of %d bytes", over.size, len(want))
				}
				_ = over.id()
				_ = over.isRequest()
			case !bytes.Equal(line, want):
				t.Fatalf("line = %q, want %q", line, want)
			}
			rest = rest[n:]
			if err == io.EOF {
				if len(rest) != 0 {
					t.Fatalf("EOF with %q unread", rest)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}
