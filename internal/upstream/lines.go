package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// DefaultMaxResultBytes bounds one message from a server (32 MiB): its
// answer to a tool call, a resource read, anything it writes on one line.
const DefaultMaxResultBytes = 32 << 20

// TooLargeError is the answer a request gets when the server's answer to
// it was over the limit: the answer was read through and discarded, never
// held whole. The request may have had its effect on the server.
type TooLargeError struct {
	Server string
	Size   int // bytes of the message, its newline left out
	Limit  int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("server %s answered with a message of %d bytes, over toolwarden's limit of %d bytes for one message; the answer was discarded", e.Server, e.Size, e.Limit)
}

// lineReader reads a server's messages, one a line. A line that fits the
// bufio buffer is handed out as a view of it; a longer one is gathered in
// chunks and copied once, at its end, into a slice of its exact size, so
// it is held whole once plus, for that copy, its chunks. A line over max
// is read through and discarded: only its ends are kept, to find its id.
type lineReader struct {
	br     *bufio.Reader
	max    int
	chunks [][]byte // a long line's bytes so far
}

// readChunk is how much of a long line one chunk holds: large enough that
// a line of many megabytes is a few dozen allocations, small enough that
// the last one wastes little.
const readChunk = 1 << 20

// lineEdge is how much of each end of an oversized line is kept to find
// its id: clients and servers put it before the payload (mcp-go, Python)
// or after it (the TypeScript SDK).
const lineEdge = 4 << 10

// oversized is what is kept of a line over the limit.
type oversized struct {
	size       int
	head, tail []byte
}

func newLineReader(br *bufio.Reader, max int) *lineReader {
	if max <= 0 {
		max = DefaultMaxResultBytes
	}
	return &lineReader{br: br, max: max}
}

// next returns the next line, with its newline if it had one: a view of
// the reader's buffer or a slice of its own (valid until the next call);
// or, for a line over the limit, nil and what was kept of it. err is the
// reader's error after the last line (io.EOF at the end).
func (r *lineReader) next() (line []byte, over *oversized, err error) {
	size := 0
	for {
		frag, err := r.br.ReadSlice('\n')
		size += len(frag)
		switch {
		case over != nil:
			over.keepTail(frag)
		case size > r.max+len("\n"):
			over = &oversized{head: r.head(frag)}
			for _, c := range r.chunks {
				over.keepTail(c)
			}
			r.drop()
			over.keepTail(frag)
		case err == bufio.ErrBufferFull || len(r.chunks) > 0:
			r.gather(frag)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if over != nil {
			over.size = len(bytes.TrimRight(over.tail, "\r\n")) + size - len(over.tail)
			return nil, over, err
		}
		if len(r.chunks) > 0 {
			return r.join(size), nil, err
		}
		return frag, nil, err
	}
}

// gather appends frag to the long line's chunks.
func (r *lineReader) gather(frag []byte) {
	for len(frag) > 0 {
		n := len(r.chunks)
		if n == 0 || len(r.chunks[n-1]) == cap(r.chunks[n-1]) {
			r.chunks = append(r.chunks, newChunk())
			n++
		}
		c := r.chunks[n-1]
		k := min(len(frag), cap(c)-len(c))
		r.chunks[n-1] = append(c, frag[:k]...)
		frag = frag[k:]
	}
}

// join copies the chunks into one slice of the line's size and lets them go.
func (r *lineReader) join(size int) []byte {
	line := make([]byte, 0, size)
	for i, c := range r.chunks {
		line = append(line, c...)
		freeChunk(c)
		r.chunks[i] = nil
	}
	r.chunks = r.chunks[:0]
	return line
}

// head is the first lineEdge bytes of the line being read, frag its latest
// fragment.
func (r *lineReader) head(frag []byte) []byte {
	var h []byte
	for _, c := range r.chunks {
		h = append(h, c[:min(len(c), lineEdge-len(h))]...)
	}
	return append(h, frag[:min(len(frag), lineEdge-len(h))]...)
}

func (r *lineReader) drop() {
	for i, c := range r.chunks {
		freeChunk(c)
		r.chunks[i] = nil
	}
	r.chunks = r.chunks[:0]
}

// keepTail keeps the last lineEdge bytes (at least) of the line.
func (o *oversized) keepTail(frag []byte) {
	if len(frag) >= lineEdge {
		o.tail = append(o.tail[:0], frag[len(frag)-lineEdge:]...)
		return
	}
	o.tail = append(o.tail, frag...)
	if len(o.tail) > 2*lineEdge {
		o.tail = append(o.tail[:0], o.tail[len(o.tail)-lineEdge:]...)
	}
}

// topID finds the id of an oversized message at one of its ends: before
// its payload at the start, or as the last member at the end. An "id"
// inside the payload is never taken: at the start it would come after
// the payload's key, at the end it would not close the message.
var (
	headID = regexp.MustCompile(`^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,)*\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)\s*[,}]`)
	tailID = regexp.MustCompile(`[,{]\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)\s*\}\s*$`)
)

// id is the message's id as written, or nil when neither end shows it.
func (o *oversized) id() []byte {
	if m := headID.FindSubmatch(o.head); m != nil {
		return m[1]
	}
	if m := tailID.FindSubmatch(o.tail); m != nil {
		return m[1]
	}
	return nil
}

// isRequest reports whether the oversized message is a request or a
// notification of the server's (it names a method near its start).
func (o *oversized) isRequest() bool {
	return methodNear.Match(o.head)
}

var methodNear = regexp.MustCompile(`^\s*\{(?:\s*"(?:jsonrpc|id)"\s*:\s*(?:"(?:[^"\\]|\\.)*"|-?[0-9]+)\s*,)*\s*"method"\s*:`)

// tooLarge deals with a message over the limit, read through and
// discarded: the request it answers gets a *TooLargeError (so the call
// ends at once, with the reason, instead of at its timeout), a request of
// the server's is refused with its id, anything else is dropped. Each is
// logged.
func (s *stdioTransport) tooLarge(o *oversized, limit int) {
	id := o.id()
	why := fmt.Sprintf("it is %d bytes, over the limit of %d bytes for one message", o.size, limit)
	switch {
	case id == nil || !rawjson.IsID(id):
		s.log.Warn("dropped a message from the server", "server", s.name, "why", why+", and shows no id at either end")
	case o.isRequest():
		s.log.Warn("refused a request of the server's", "server", s.name, "id", string(id), "why", why)
		msg, _ := json.Marshal("toolwarden: the request is " + why)
		_ = s.write(fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", id, mcp.INVALID_REQUEST, msg))
	default:
		s.mu.Lock()
		w := s.take(id)
		s.mu.Unlock()
		if w == nil {
			s.log.Warn("dropped a message from the server", "server", s.name, "id", string(id), "why", why+", and answers no request")
			return
		}
		s.log.Warn("discarded the server's answer", "server", s.name, "id", string(id), "why", why)
		w.answer(nil, nil, nil, &TooLargeError{Server: s.name, Size: o.size, Limit: limit})
	}
}
