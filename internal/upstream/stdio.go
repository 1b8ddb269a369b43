package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// stdioTransport is the client end of a stdio MCP server. mcp-go's client
// runs the handshake over it (it implements transport.Interface), and tool
// calls skip mcp-go altogether: the request is written as one line with an
// id of ours, and the reader routes the answer by id to the call's waiter,
// which gets the result's raw bytes. One goroutine reads the server's
// stdout; nothing else runs per call.
//
// mcp-go's own stdio transport decodes each line two or three times,
// copies it twice and hands every answer to the waiting call through a
// channel: most of the proxy's cost per call (docs/performance.md, "Proxy
// round trip").
type stdioTransport struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser // our ends of the pipes: non-blocking, served by
	stdout io.ReadCloser  // the netpoller
	log    *slog.Logger

	wmu sync.Mutex // whole lines, one writer at a time

	mu       sync.Mutex
	calls    map[uint64]*Pending // tools/calls, by the number in their id "tw-N"
	waiting  map[string]waiter   // other requests, by id key (see idKey)
	closed   error               // why the connection ended, once it has
	done     chan struct{}
	watching bool          // the timeout watcher runs (see watch)
	tick     time.Duration // how often it looks

	// onProgress gets notifications/progress lines, raw (set before the
	// reader starts; see Client.OnProgress).
	onProgress func(line []byte)

	// onServerRequest answers the server's sampling, elicitation and roots
	// requests (set before the reader starts; see Client.OnServerRequest);
	// asked cancels those in flight, by id key (guarded by mu).
	onServerRequest func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *RPCError)
	declared        mcp.ClientCapabilities // what the handshake told the server
	asked           map[string]context.CancelFunc

	hmu       sync.RWMutex
	onNotify  func(mcp.JSONRPCNotification)
	onRequest transport.RequestHandler
	ctx       context.Context

	// onLost runs once when the connection ends by itself (the server
	// exited or closed its stdout), not after Close.
	onLost    func(error)
	closing   chan struct{}
	closeOnce sync.Once
	exited    chan struct{}

	// tail keeps the end of the server's stderr (see ExitedError).
	tail *stderrTail

	// maxLine bounds one message from the server (0: the default; see
	// lineReader); name is the server's, for errors.
	maxLine int
	name    string
}

// waiter gets the answer to one request: the response line and, inside it,
// the raw result or error (valid JSON, aliasing the reader's buffer: copy
// what you keep), or err when the connection ended first.
type waiter interface {
	answer(line, result, rpcErr []byte, err error)
}

// errStopped: the server exited or closed its stdout.
var errStopped = errors.New("the server exited or closed its output")

func newStdioTransport(cmd *exec.Cmd, log *slog.Logger, onLost func(error)) *stdioTransport {
	return &stdioTransport{
		cmd:     cmd,
		log:     log,
		calls:   map[uint64]*Pending{},
		tick:    50 * time.Millisecond,
		waiting: map[string]waiter{},
		done:    make(chan struct{}),
		closing: make(chan struct{}),
		exited:  make(chan struct{}),
		onLost:  onLost,
		ctx:     context.Background(),
	}
}

// Start starts the server and the reader.
func (s *stdioTransport) Start(ctx context.Context) error {
	s.hmu.Lock()
	s.ctx = ctx
	s.hmu.Unlock()
	inR, inW, err := os.Pipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return err
	}
	s.cmd.Stdin = inR
	s.cmd.Stdout = outW
	err = s.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		close(s.exited)
		return err
	}
	s.stdin, s.stdout = inW, outR
	go func() {
		_ = s.cmd.Wait()
		close(s.exited)
	}()
	go s.read()
	return nil
}

// read routes the server's messages until its stdout ends. A message over
// the limit is discarded as it is read (see lineReader and tooLarge).
func (s *stdioTransport) read() {
	lr := newLineReader(bufio.NewReaderSize(s.stdout, 64<<10), s.maxLine)
	for {
		line, over, err := lr.next()
		switch {
		case over != nil:
			s.tooLarge(over, lr.max)
		case len(line) > 0:
			s.handle(line)
			if len(line) >= releaseAfter {
				release()
			}
		}
		if err != nil {
			if err != io.EOF && !errors.Is(err, os.ErrClosed) {
				s.log.Warn("reading the server's output", "err", err)
			}
			s.end(errStopped)
			return
		}
	}
}

// releaseAfter is the size of a message after which read hands the
// memory it held back to the system (see release).
const releaseAfter = 4 << 20

// release collects a large message that has been handled (relayed and
// let go) and returns its memory to the system at once. Left to the
// collector's pacing, the next large message would be read beside the
// last one's garbage: the process peaked at four times a result's size,
// where with this it peaks at twice (the message, and its chunks while
// they are joined; see lineReader). A collection costs milliseconds, a
// message this large takes longer to relay.
func release() { debug.FreeOSMemory() }

// handle routes one line: an answer to its waiter, a notification to the
// handler, a request from the server to mcp-go's client. Lines that are not
// JSON-RPC are skipped, as mcp-go does.
func (s *stdioTransport) handle(line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	switch rawjson.Check(line) {
	case rawjson.Invalid:
		return
	case rawjson.TooDeep:
		s.tooDeep(line) // answered, never left waiting (serverreq.go)
		return
	}
	msg, ok := rawjson.ReadMessage(line)
	if !ok {
		return
	}
	id, method, result, rpcErr := msg.ID, msg.Method, msg.Result, msg.Error
	m := ""
	if method != nil {
		var ok bool
		if m, ok = rawjson.String(method); !ok {
			return
		}
	}
	if m != "" {
		if id == nil {
			if m == string(mcp.MethodNotificationProgress) && s.onProgress != nil {
				s.onProgress(line)
				return
			}
			if m == string(mcp.MethodNotificationCancelled) {
				s.cancelAsked(line)
			}
			s.notification(line)
		} else if !s.serverRequest(m, id, msg.Params) {
			s.request(line)
		}
		return
	}
	if id == nil {
		return
	}
	s.mu.Lock()
	w := s.take(id)
	s.mu.Unlock()
	if w != nil {
		w.answer(line, result, rpcErr, nil)
	}
}

// take finds and removes the waiter for a raw id; s.mu is held.
func (s *stdioTransport) take(id []byte) waiter {
	if n, ok := parseCallID(id); ok {
		if w, ok := s.calls[n]; ok {
			delete(s.calls, n)
			return w
		}
	}
	key, ok := idKey(id)
	if !ok {
		return nil
	}
	w := s.waiting[key]
	if w != nil {
		delete(s.waiting, key)
	}
	return w
}

// parseCallID reads the number of one of our ids, "tw-N".
func parseCallID(id []byte) (uint64, bool) {
	const prefix = `"` + callIDPrefix
	if len(id) < len(prefix)+2 || id[len(id)-1] != '"' || string(id[:len(prefix)]) != prefix {
		return 0, false
	}
	var n uint64
	for _, c := range id[len(prefix) : len(id)-1] {
		if c < '0' || c > '9' || n > (math.MaxUint64-uint64(c-'0'))/10 {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// idKey is the map key of a raw JSON-RPC id: a string id is itself, a
// number is tagged so "1" and 1 differ (and 1 and 1.0 do not, as in mcp-go).
func idKey(raw []byte) (string, bool) {
	if rawjson.Kind(raw) == '"' {
		return rawjson.String(raw)
	}
	var id mcp.RequestId
	if json.Unmarshal(raw, &id) != nil || id.IsNil() {
		return "", false
	}
	return "\x00" + id.String(), true
}

func (s *stdioTransport) notification(line []byte) {
	var n mcp.JSONRPCNotification
	if json.Unmarshal(line, &n) != nil {
		return
	}
	s.hmu.RLock()
	h := s.onNotify
	s.hmu.RUnlock()
	if h != nil {
		h(n)
	}
}

// request answers a request from the server (ping, or anything mcp-go's
// client handles), on a goroutine of its own as mcp-go does.
func (s *stdioTransport) request(line []byte) {
	var req transport.JSONRPCRequest
	if json.Unmarshal(line, &req) != nil {
		return
	}
	s.hmu.RLock()
	h, ctx := s.onRequest, s.ctx
	s.hmu.RUnlock()
	if h == nil {
		s.respond(transport.NewJSONRPCErrorResponse(req.ID, mcp.METHOD_NOT_FOUND, "No request handler configured", nil))
		return
	}
	go func() {
		resp, err := h(ctx, req)
		if err != nil {
			resp = transport.NewJSONRPCErrorResponse(req.ID, mcp.INTERNAL_ERROR, err.Error(), nil)
		}
		if resp != nil {
			s.respond(resp)
		}
	}()
}

func (s *stdioTransport) respond(resp *transport.JSONRPCResponse) {
	b, err := json.Marshal(resp)
	if err != nil {
		return
	}
	_ = s.write(append(b, '\n'))
}

// end marks the connection ended and fails every waiter.
func (s *stdioTransport) end(why error) {
	s.mu.Lock()
	if s.closed != nil {
		s.mu.Unlock()
		return
	}
	s.closed = why
	ws, cs, asked := s.waiting, s.calls, s.asked
	s.waiting, s.calls, s.asked = nil, nil, nil
	close(s.done)
	s.mu.Unlock()
	for _, cancel := range asked {
		cancel()
	}
	for _, w := range ws {
		w.answer(nil, nil, nil, why)
	}
	for _, w := range cs {
		w.answer(nil, nil, nil, why)
	}
	select {
	case <-s.closing:
	default:
		if s.onLost != nil {
			s.onLost(why)
		}
	}
}

// write writes whole lines.
func (s *stdioTransport) write(line []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.stdin.Write(line)
	return err
}

// send registers w under key and writes line, a request with that id.
// An error means w was not registered or was removed again: it will not
// be answered.
func (s *stdioTransport) send(key string, line []byte, w waiter) error {
	s.mu.Lock()
	if s.closed != nil {
		err := s.closed
		s.mu.Unlock()
		return err
	}
	s.waiting[key] = w
	s.mu.Unlock()
	if err := s.write(line); err != nil {
		if s.forget(key) {
			return fmt.Errorf("writing to the server: %w", err)
		}
		// Answered or failed meanwhile: w has been told.
	}
	return nil
}

// sendCall is send for a tools/call (id "tw-<pd.id>"), which times out at
// pd.at.
func (s *stdioTransport) sendCall(pd *Pending, line []byte) error {
	s.mu.Lock()
	if s.closed != nil {
		err := s.closed
		s.mu.Unlock()
		return err
	}
	s.calls[pd.id] = pd
	if !s.watching {
		s.watching = true
		go s.watch()
	}
	s.mu.Unlock()
	if err := s.write(line); err != nil {
		if s.forgetCall(pd.id) {
			return fmt.Errorf("writing to the server: %w", err)
		}
	}
	return nil
}

// idleStop is how long the timeout watcher lingers with nothing to watch.
const idleStop = 10 * time.Second

// watch ends the calls that run past their tool timeout. Tool timeouts
// are seconds to minutes, so looking every tick is precise enough, and it
// costs a call nothing: a timer per call (or a watcher of its own, with
// its own lock and map) is a visible share of the proxy's CPU per round
// trip (docs/performance.md, "Proxy round trip"). It runs while calls are in flight, and a little after, so a steady
// stream of calls does not restart it each time.
func (s *stdioTransport) watch() {
	t := time.NewTicker(s.tick)
	defer t.Stop()
	var idleSince time.Time
	var due []*Pending
	for {
		var now time.Time
		select {
		case <-s.done:
			return // end failed every call
		case now = <-t.C:
		}
		s.mu.Lock()
		if len(s.calls) == 0 {
			if idleSince.IsZero() {
				idleSince = now
			} else if now.Sub(idleSince) > idleStop {
				s.watching = false
				s.mu.Unlock()
				return
			}
		} else {
			idleSince = time.Time{}
		}
		for id, pd := range s.calls {
			if !now.Before(pd.at) {
				due = append(due, pd)
				delete(s.calls, id)
			}
		}
		s.mu.Unlock()
		// Each on its own goroutine: ending a call answers the client, and
		// a slow client must not hold up the other timeouts.
		for i, pd := range due {
			go pd.timedOut()
			due[i] = nil
		}
		due = due[:0]
	}
}

// forget removes the waiter for key and reports whether it was there.
func (s *stdioTransport) forget(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.waiting[key]; ok {
		delete(s.waiting, key)
		return true
	}
	return false
}

// forgetCall is forget for a tools/call.
func (s *stdioTransport) forgetCall(id uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.calls[id]; ok {
		delete(s.calls, id)
		return true
	}
	return false
}

// notify writes a notification, without blocking the caller.
func (s *stdioTransport) notify(line []byte) {
	go func() { _ = s.write(line) }()
}

// respWaiter is a SendRequest waiting for its response.
type respWaiter chan respResult

type respResult struct {
	resp *transport.JSONRPCResponse
	err  error
}

func (w respWaiter) answer(line, _, _ []byte, err error) {
	if err != nil {
		w <- respResult{err: err}
		return
	}
	var resp transport.JSONRPCResponse
	if err := json.Unmarshal(line, &resp); err != nil {
		w <- respResult{err: fmt.Errorf("malformed response: %w", err)}
		return
	}
	w <- respResult{resp: &resp}
}

// SendRequest implements transport.Interface (mcp-go's client uses it for
// the handshake; the upstream client for tools/list).
func (s *stdioTransport) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	rawID, err := json.Marshal(req.ID)
	if err != nil {
		return nil, err
	}
	key, ok := idKey(rawID)
	if !ok {
		return nil, errors.New("request without an id")
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("failed to marshal request: %w", err)
	}
	w := make(respWaiter, 1)
	if err := s.send(key, append(b, '\n'), w); err != nil {
		return nil, err
	}
	select {
	case r := <-w:
		return r.resp, r.err
	case <-ctx.Done():
		if !s.forget(key) {
			r := <-w
			return r.resp, r.err
		}
		return nil, ctx.Err()
	}
}

// SendNotification implements transport.Interface.
func (s *stdioTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	select {
	case <-s.done:
		return transport.ErrTransportClosed
	default:
	}
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	return s.write(append(b, '\n'))
}

// SetNotificationHandler implements transport.Interface.
func (s *stdioTransport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	s.hmu.Lock()
	s.onNotify = h
	s.hmu.Unlock()
}

// SetRequestHandler implements transport.BidirectionalInterface.
func (s *stdioTransport) SetRequestHandler(h transport.RequestHandler) {
	s.hmu.Lock()
	s.onRequest = h
	s.hmu.Unlock()
}

// GetSessionId implements transport.Interface: stdio has no session ID.
func (s *stdioTransport) GetSessionId() string { return "" }

// Shutdown timing, as mcp-go's: stdin closed, then SIGTERM, then SIGKILL.
const (
	gracefulShutdown = 2 * time.Second
	forceKillWait    = 3 * time.Second
)

// Close ends the connection and stops the server: it closes the server's
// stdin, waits for it to exit, then terminates and at last kills it.
func (s *stdioTransport) Close() error {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.end(transport.ErrTransportClosed)
		if s.stdin == nil {
			return
		}
		// Not under wmu: a write blocked on a full pipe fails instead.
		s.stdin.Close()
		if !s.waitExit(gracefulShutdown) {
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			if !s.waitExit(forceKillWait) {
				_ = s.cmd.Process.Kill()
				s.waitExit(forceKillWait)
			}
		}
		// A grandchild may still hold the pipe open: stop reading.
		s.stdout.Close()
	})
	return nil
}

func (s *stdioTransport) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.exited:
		return true
	case <-t.C:
		return false
	}
}
