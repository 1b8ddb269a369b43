package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// callServer is a handler whose tools/call waits until release is closed
// (or its context ends: then it answers the context's cause as a JSON-RPC
// error, as a call cancelled at shutdown does) and whose responses (a
// client's answer to an ask) close answered.
type callServer struct {
	started  chan struct{} // closed once a call is in flight
	release  chan struct{}
	answered chan struct{}
	once     atomic.Bool
}

func newCallServer() *callServer {
	return &callServer{started: make(chan struct{}), release: make(chan struct{}), answered: make(chan struct{})}
}

func (c *callServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		return
	}
	if strings.Contains(string(b), `"result"`) {
		close(c.answered)
	}
	if !strings.Contains(string(b), `"tools/call"`) {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if c.once.CompareAndSwap(false, true) {
		close(c.started)
	}
	select {
	case <-c.release:
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"done"}]}}`)
	case <-c.answered:
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"approved and done"}]}}`)
	case <-r.Context().Done():
		msg, _ := json.Marshal(context.Cause(r.Context()).Error())
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":`+string(msg)+`}}`)
	}
}

// callAsync posts a tools/call and returns its answer's body on a channel.
func callAsync(t *testing.T, c *http.Client, url string) <-chan string {
	out := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(callBody))
		resp, err := c.Do(req)
		if err != nil {
			out <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		out <- string(b)
	}()
	return out
}

func shutdownAsync(f *Front, ctx context.Context) <-chan error {
	done := make(chan error, 1)
	go func() { done <- f.Shutdown(ctx) }()
	return done
}

// awaitDraining waits for Shutdown to have closed the listener.
func awaitDraining(t *testing.T, f *testFront) {
	t.Helper()
	for i := 0; !f.isDraining(); i++ {
		if i > 500 {
			t.Fatal("shutdown did not begin")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestShutdownLetsACallInFlightFinishAndRefusesNewConnections(t *testing.T) {
	t.Parallel()
	cs := newCallServer()
	var closedAt atomic.Int64
	f := startFront(t, cs, frontSetup{opts: FrontOptions{Grace: 20 * time.Second}, upstreams: func(context.Context) error {
		closedAt.Store(time.Now().UnixNano())
		return nil
	}})
	answer := callAsync(t, &http.Client{Transport: &http.Transport{}}, f.url)
	<-cs.started
	done := shutdownAsync(f.Front, context.Background())
	awaitDraining(t, f)
	// Stopped accepting: a new connection is refused outright.
	if c, err := net.DialTimeout("tcp", strings.TrimPrefix(f.url, "http://"), time.Second); err == nil {
		c.Close()
		t.Error("a new connection was accepted after shutdown began")
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a new connection: %v, want connection refused", err)
	}
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("shutdown returned (%v) while a call was in flight", err)
	default:
	}
	finished := time.Now()
	close(cs.release)
	if got := <-answer; !strings.Contains(got, `"text":"done"`) {
		t.Fatalf("the call in flight at shutdown did not finish with its result: %s", got)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if closedAt.Load() < finished.UnixNano() {
		t.Error("the upstreams were closed before the call in flight finished")
	}
}

func TestShutdownCancelsTheCallsLeftAfterTheGracePeriodSayingWhy(t *testing.T) {
	t.Parallel()
	cs := newCallServer()
	f := startFront(t, cs, frontSetup{opts: FrontOptions{Grace: 700 * time.Millisecond}})
	answer := callAsync(t, &http.Client{Transport: &http.Transport{}}, f.url)
	<-cs.started
	t0 := time.Now()
	if err := f.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	took := time.Since(t0)
	got := <-answer
	if !strings.Contains(got, "shutdown grace period") || !strings.Contains(got, "retry it") {
		t.Errorf("the cancelled call's answer does not say why: %s", got)
	}
	if took < 700*time.Millisecond || took > 3*time.Second {
		t.Errorf("shutdown took %s with a grace period of 0.7 s", took)
	}
}

func TestASecondSignalEndsTheGracePeriodAtOnce(t *testing.T) {
	t.Parallel()
	cs := newCallServer()
	f := startFront(t, cs, frontSetup{opts: FrontOptions{Grace: time.Minute}})
	answer := callAsync(t, &http.Client{Transport: &http.Transport{}}, f.url)
	<-cs.started
	ctx, cut := context.WithCancel(context.Background())
	done := shutdownAsync(f.Front, ctx)
	awaitDraining(t, f)
	t0 := time.Now()
	cut()
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("shutdown took %s after the grace period was cut short", took)
	}
	if got := <-answer; !strings.Contains(got, "shutdown grace period") {
		t.Errorf("the cancelled call's answer does not say why: %s", got)
	}
}

func TestShutdownEndsListeningStreamsAtOnce(t *testing.T) {
	t.Parallel()
	cs := newCallServer()
	f := startFront(t, cs, frontSetup{opts: FrontOptions{Grace: time.Minute}})
	resp, err := http.Get(f.url + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	t0 := time.Now()
	if err := f.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	_, _ = io.ReadAll(resp.Body) // ends when the stream does
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("an open listening stream held shutdown for %s", took)
	}
}

func TestWhileDrainingAnAnswerReachesTheCallWaitingForItAndNewRequestsAreRefused(t *testing.T) {
	t.Parallel()
	cs := newCallServer()
	f := startFront(t, cs, frontSetup{opts: FrontOptions{Grace: 20 * time.Second}})
	// Two clients with a connection each kept alive from before shutdown.
	keptClient := func() *http.Client {
		tr := &http.Transport{MaxIdleConnsPerHost: 1}
		t.Cleanup(tr.CloseIdleConnections)
		c := &http.Client{Transport: tr}
		post(t, c, f.url, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return c
	}
	answering, calling := keptClient(), keptClient()
	answer := callAsync(t, &http.Client{Transport: &http.Transport{}}, f.url)
	<-cs.started
	done := shutdownAsync(f.Front, context.Background())
	awaitDraining(t, f)
	// A new request is refused under its id, and its connection closed.
	resp, b := post(t, calling, f.url, "", callBody)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a new request while draining: %d %s, want 503", resp.StatusCode, b)
	}
	if id, _, msg := rpcError(t, b); string(id) != "7" || !strings.Contains(msg, "shutting down") {
		t.Errorf("the refusal: id %s %q", id, msg)
	}
	// The human's answer to the waiting call's ask still gets through.
	resp, b = post(t, answering, f.url, "", `{"jsonrpc":"2.0","id":1,"result":{"action":"accept"}}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("an answer while draining: %d %s, want it passed on (202)", resp.StatusCode, b)
	}
	if got := <-answer; !strings.Contains(got, "approved and done") {
		t.Errorf("the waiting call did not finish with its answer: %s", got)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}
