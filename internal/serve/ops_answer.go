package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// answerWriter watches what a request's handler writes, so that a call
// cancelled at the end of the shutdown grace period still gets an answer
// that says why: mcp-go writes nothing for a request whose context ended
// (it takes the client to be gone), and a client left without an answer
// reports a transport error that explains nothing.
//
// It also bounds each write's stall: before every write the connection's
// write deadline moves to stall from now, so a client that stops reading
// is cut off once its buffers are full, while a call that waits with
// nothing to write is not bounded at all. net/http lifts the deadline
// once the answer is flushed, before the connection's next request.
type answerWriter struct {
	http.ResponseWriter
	stall    time.Duration // 0: no bound
	status   int           // 0 until the header is written
	sse      bool          // the answer is an event stream
	answered bool          // a JSON-RPC response was written (not a request or notification on the stream)
}

// progress moves the write deadline to stall from now.
func (w *answerWriter) progress() {
	if w.stall > 0 {
		_ = http.NewResponseController(w.ResponseWriter).SetWriteDeadline(time.Now().Add(w.stall))
	}
}

func (w *answerWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.sse = strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream")
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *answerWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.sse || isResponseEvent(p) {
		w.answered = true
	}
	w.progress()
	return w.ResponseWriter.Write(p)
}

func (w *answerWriter) Flush() {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.progress()
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *answerWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// isResponseEvent reports whether an SSE write carries a JSON-RPC
// response: its first top-level key after the id is "result" or "error",
// where a request or notification has "method". Only the head of the
// event is read: a result's content comes after its key.
func isResponseEvent(p []byte) bool {
	head := p[:min(len(p), 512)]
	first := func(key string) int {
		if i := bytes.Index(head, []byte(key)); i >= 0 {
			return i
		}
		return len(head)
	}
	m := first(`"method":`)
	return min(first(`"result":`), first(`"error":`)) < m
}

// answerCancelled answers a call cancelled by the end of the grace period
// under its id, unless its handler answered it already: as a JSON body
// when nothing was written, as a last event when the answer is a stream.
func (w *answerWriter) answerCancelled(id json.RawMessage) {
	switch {
	case w.answered:
	case w.status == 0:
		w.progress()
		writeRPCError(w.ResponseWriter, http.StatusServiceUnavailable, id, mcp.INTERNAL_ERROR, ErrGraceEnded.Error())
	case w.sse:
		if id == nil {
			id = json.RawMessage("null")
		}
		msg, _ := json.Marshal(ErrGraceEnded.Error())
		w.progress()
		fmt.Fprintf(w.ResponseWriter, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"error\":{\"code\":%d,\"message\":%s}}\n\n", id, mcp.INTERNAL_ERROR, msg)
		if f, ok := w.ResponseWriter.(http.Flusher); ok {
			f.Flush()
		}
	}
}
