package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// Bounds on what one HTTP request may cost serve. Headers are bounded by
// the http.Server (MaxHeaderBytes, ReadHeaderTimeout: see NewHTTPServer);
// the body by limitBody, which reads it whole before anything else runs,
// so that an oversized or dribbled body never reaches identity, the rate
// limiter or mcp-go.

// DefaultMaxHeaderBytes bounds a request's header block. An MCP request's
// headers are a few hundred bytes; a JWT bearer token a few KiB.
const DefaultMaxHeaderBytes = 64 << 10

// DefaultReadTimeout is how long a client has to send a request's headers,
// and again its body, before the connection is closed.
const DefaultReadTimeout = 10 * time.Second

// body is a request body limitBody has read whole: the handlers after it
// read it as usual, and the ones that need the bytes (the rate limiter,
// the drain gate) take them without reading twice.
type body struct {
	*bytes.Reader
	data []byte
	msg  message
}

func (*body) Close() error { return nil }

// bodyOf returns the body limitBody read for r, or nil when it read none
// (a GET, or a request that never passed through limitBody).
func bodyOf(r *http.Request) *body {
	b, _ := r.Body.(*body)
	return b
}

// limitBody reads a POST's body whole before passing the request on: at
// most maxBytes (more is answered 413 with the key that raises the limit)
// within timeout of the headers (a client still sending then is answered
// 408 and its connection closed, so a body dribbled a byte a second holds
// one goroutine for timeout, not for ever). The read deadline is lifted
// once the body is in: a call's answer may take minutes while a human
// decides, and nothing more is read from the client meanwhile.
func limitBody(maxBytes int64, timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		// The deadline stays when the body is refused: net/http reads
		// what is left of it after the answer, and must not wait for ever.
		rc := http.NewResponseController(w)
		if timeout > 0 {
			_ = rc.SetReadDeadline(time.Now().Add(timeout)) // a test's recorder cannot: then size alone bounds it
		}
		if r.ContentLength > maxBytes {
			tooLarge(w, maxBytes)
			return
		}
		data, err := readBounded(r, maxBytes)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			w.Header().Set("Connection", "close")
			writeRPCError(w, http.StatusRequestTimeout, nil, mcp.INVALID_REQUEST,
				fmt.Sprintf("toolwarden: the request body did not arrive within %s of its headers; the connection is closed (send the whole request at once)", timeout))
			return
		case err != nil:
			w.Header().Set("Connection", "close")
			writeRPCError(w, http.StatusBadRequest, nil, mcp.PARSE_ERROR, "toolwarden: the request body could not be read: "+err.Error())
			return
		case int64(len(data)) > maxBytes:
			tooLarge(w, maxBytes)
			return
		}
		_ = rc.SetReadDeadline(time.Time{}) // nothing more is read from the client
		r.Body = &body{Reader: bytes.NewReader(data), data: data, msg: classify(data)}
		next.ServeHTTP(w, r)
	})
}

// readBounded reads at most maxBytes+1 bytes of r's body.
func readBounded(r *http.Request, maxBytes int64) ([]byte, error) {
	size := int64(512)
	if r.ContentLength > 0 {
		size = r.ContentLength + 1 // the +1 lets ReadFrom see the end without growing
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	_, err := buf.ReadFrom(io.LimitReader(r.Body, maxBytes+1))
	return buf.Bytes(), err
}

// tooLarge answers a body over the limit: 413, a JSON-RPC error that says
// the limit and the key that raises it, and the connection closed (the
// rest of the body is not read).
func tooLarge(w http.ResponseWriter, maxBytes int64) {
	w.Header().Set("Connection", "close")
	writeRPCError(w, http.StatusRequestEntityTooLarge, nil, mcp.INVALID_REQUEST,
		fmt.Sprintf("toolwarden: the request body is over serve's limit of %s; raise max_request_kib in [serve] to accept larger requests", kib(maxBytes)))
}

// kib words a byte count as the config key counts it.
func kib(n int64) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d bytes", n)
}
