package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// rpcError decodes a JSON-RPC error body.
func rpcError(t *testing.T, body string) (id json.RawMessage, code int, msg string) {
	t.Helper()
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("not a JSON-RPC error body: %q: %v", body, err)
	}
	return m.ID, m.Error.Code, m.Error.Message
}

func TestABodyOverTheLimitIsRefused413WithTheLimitAndTheKeyToRaise(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) })
	f := startFront(t, inner, frontSetup{maxBody: 2048})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"` + strings.Repeat("x", 4096) + `"}}}`
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			var body io.Reader = strings.NewReader(big)
			if chunked {
				body = io.MultiReader(strings.NewReader(big)) // unknown length: sent chunked
			}
			req, _ := http.NewRequest(http.MethodPost, f.url+"/mcp", body)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestEntityTooLarge {
				t.Fatalf("status %d, want 413: %s", resp.StatusCode, b)
			}
			_, _, msg := rpcError(t, string(b))
			if !strings.Contains(msg, "2 KiB") || !strings.Contains(msg, "max_request_kib") || !strings.Contains(msg, "[serve]") {
				t.Errorf("the error does not say the limit and the key that raises it: %q", msg)
			}
		})
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("an oversized body reached the handler %d times", n)
	}
	// A body at the limit passes whole.
	exact := `{"jsonrpc":"2.0","id":1,"method":"ping","pad":"` + strings.Repeat("y", 2048-len(`{"jsonrpc":"2.0","id":1,"method":"ping","pad":""}`)) + `"}`
	resp, _ := post(t, http.DefaultClient, f.url, "", exact)
	if resp.StatusCode != http.StatusOK || reached.Load() != 1 {
		t.Errorf("a body of exactly the limit: status %d, reached %d; want 200 and 1", resp.StatusCode, reached.Load())
	}
}

func TestABodyDribbledAByteASecondIsCutOffWhileOtherClientsAreServed(t *testing.T) {
	t.Parallel()
	f := startFront(t, echoHandler, frontSetup{opts: FrontOptions{ReadTimeout: 1500 * time.Millisecond}})
	c := rawConn(t, f.url)
	body := callBody
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // one byte a second, for longer than the test waits
		for i := 0; i < len(body); i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
			}
			if _, err := c.Write([]byte{body[i]}); err != nil {
				return
			}
		}
	}()
	// Meanwhile other clients are answered promptly.
	for i := range 5 {
		t0 := time.Now()
		resp, b := post(t, http.DefaultClient, f.url, "", callBody)
		if resp.StatusCode != http.StatusOK || b != callBody {
			t.Fatalf("call %d beside the slow client: %d %q", i, resp.StatusCode, b)
		}
		if d := time.Since(t0); d > time.Second {
			t.Errorf("call %d beside the slow client took %s", i, d)
		}
		time.Sleep(100 * time.Millisecond)
	}
	resp, b, err := readResponse(t, c, 10*time.Second)
	if err != nil {
		t.Fatalf("the dribbling client was not answered: %v", err)
	}
	took := time.Since(start)
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Fatalf("status %d, want 408: %s", resp.StatusCode, b)
	}
	if _, _, msg := rpcError(t, b); !strings.Contains(msg, "did not arrive within 1.5s") {
		t.Errorf("the error does not say what happened: %q", msg)
	}
	if took > 4*time.Second {
		t.Errorf("cut off after %s; the read timeout is 1.5 s", took)
	}
	// And the connection is closed: the client reads its end.
	_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if n, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("the connection was not closed after the 408 (read %d bytes, %v)", n, err)
	}
}

func TestHeadersDribbledAreCutOffAtTheReadTimeout(t *testing.T) {
	t.Parallel()
	f := startFront(t, echoHandler, frontSetup{opts: FrontOptions{ReadTimeout: time.Second}})
	c := rawConn(t, f.url)
	start := time.Now()
	go func() {
		for _, b := range []byte("POST /mcp HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaa") {
			if _, err := c.Write([]byte{b}); err != nil {
				return
			}
			time.Sleep(300 * time.Millisecond)
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.ReadAll(c) // returns when the server closes the connection
	if err != nil {
		t.Fatalf("the server did not close the connection: %v", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("closed after %s; the header timeout is 1 s", took)
	}
}

func TestHeadersOverTheBoundAreRefused431(t *testing.T) {
	t.Parallel()
	f := startFront(t, echoHandler, frontSetup{opts: FrontOptions{MaxHeaderBytes: 4 << 10}})
	req, _ := http.NewRequest(http.MethodPost, f.url+"/mcp", strings.NewReader(callBody))
	req.Header.Set("X-Big", strings.Repeat("h", 16<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status %d, want 431", resp.StatusCode)
	}
}

func TestAStreamWaitingLongerThanEveryTimeoutIsNotCut(t *testing.T) {
	t.Parallel()
	// A tools/call whose answer streams (SSE) and waits, as one waiting
	// for a human's approval does, for several read timeouts.
	const wait = 3 * time.Second
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"elicitation/create\"}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return // the call's context was cancelled: the test fails below
		}
		fmt.Fprint(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n")
	})
	f := startFront(t, inner, frontSetup{opts: FrontOptions{ReadTimeout: 500 * time.Millisecond, IdleTimeout: 500 * time.Millisecond, WriteStall: 500 * time.Millisecond}})
	resp, b := post(t, http.DefaultClient, f.url, "", callBody)
	if resp.StatusCode != http.StatusOK || !strings.Contains(b, `"id":7,"result"`) {
		t.Fatalf("the stream was cut before its answer (%d): %q", resp.StatusCode, b)
	}
}

func TestAnOversizedBodyDribbledAfterItsRefusalDoesNotHoldTheConnection(t *testing.T) {
	t.Parallel()
	f := startFront(t, echoHandler, frontSetup{maxBody: 2048, opts: FrontOptions{ReadTimeout: time.Second}})
	c := rawConn(t, f.url)
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n{")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	reply, err := io.ReadAll(c) // the 413, then the end of the connection
	if err != nil {
		t.Fatalf("the connection was not closed: %v (after %s)", err, time.Since(start))
	}
	if !strings.HasPrefix(string(reply), "HTTP/1.1 413") {
		t.Fatalf("got %q, want 413", reply)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("the refused body's client held the connection for %s; the read timeout is 1 s", took)
	}
}

func TestAClientThatStopsReadingIsCutOffAfterTheWriteStall(t *testing.T) {
	t.Parallel()
	returned := make(chan error, 1)
	chunk := []byte(strings.Repeat("x", 1<<20))
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 1024; i++ { // 1 GiB: far more than any socket buffers
			if _, err := w.Write(chunk); err != nil {
				returned <- err
				return
			}
		}
		returned <- nil
	})
	f := startFront(t, inner, frontSetup{opts: FrontOptions{WriteStall: 500 * time.Millisecond}})
	c := rawConn(t, f.url)
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(callBody), callBody)
	// ... and never reads.
	select {
	case err := <-returned:
		if err == nil {
			t.Fatal("the handler wrote 1 GiB to a client that reads nothing")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write to a client that stopped reading was still blocked after 10 s; the stall bound is 0.5 s")
	}
}

func TestAnAnswerOnAKeptConnectionIsNotRefusedByTheLastAnswersWriteDeadline(t *testing.T) {
	t.Parallel()
	f := startFront(t, echoHandler, frontSetup{maxBody: 1024, opts: FrontOptions{WriteStall: 300 * time.Millisecond}})
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	kept := &http.Client{Transport: tr}
	if resp, b := post(t, kept, f.url, "", callBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("first call: %d %s", resp.StatusCode, b)
	}
	time.Sleep(700 * time.Millisecond) // past the deadline the first answer's writes left
	// Answered before any answerWriter runs (the body limit), on the same connection.
	resp, b := post(t, kept, f.url, "", `{"jsonrpc":"2.0","id":2,"method":"ping","pad":"`+strings.Repeat("z", 2048)+`"}`)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("second request on the kept connection: %d %q, want 413", resp.StatusCode, b)
	}
}
