package web

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

// withCookies sends r with this raw Cookie header instead of the site's.
func (s *testSite) withCookies(t *testing.T, method, path, body, cookies string) int {
	t.Helper()
	hr, _ := http.NewRequest(method, s.ts.URL+path, strings.NewReader(body))
	hr.Host = s.listen
	if method == http.MethodPost {
		hr.Header.Set("Origin", "http://"+s.listen)
		hr.Header.Set("Content-Type", "application/json")
	}
	hr.Header.Set("Cookie", cookies)
	resp, err := noRedirect.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestACookiePlantedFromAnotherPortDoesNotLockTheHolderOut(t *testing.T) {
	t.Parallel()
	s := newTestSite(t, Defaults())
	name := s.cookie.Name
	planted := name + "=" + strings.Repeat("0", 64)
	real := name + "=" + s.cookie.Value
	// A browser sends the cookie with the longer Path (the planted
	// Path=/api one) first.
	for _, tt := range []struct {
		name, cookies string
		want          int
	}{
		{"the planted cookie first, the real one second", planted + "; " + real, http.StatusOK},
		{"the real cookie first", real + "; " + planted, http.StatusOK},
		{"only the planted cookie", planted, http.StatusForbidden},
		{"two planted cookies", planted + "; " + name + "=x", http.StatusForbidden},
		{"the token under another port's name", "toolwarden_inbox_1=" + s.cookie.Value, http.StatusForbidden},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if code := s.withCookies(t, http.MethodGet, "/api/asks", "", tt.cookies); code != tt.want {
				t.Errorf("GET /api/asks: status %d, want %d", code, tt.want)
			}
		})
	}
	// A state change with the planted cookie first is the holder's own.
	p := post(t, s.dir, testAsk())
	if code := s.withCookies(t, http.MethodPost, "/api/asks/"+p.ID(), `{"option":"deny"}`, planted); code != http.StatusForbidden {
		t.Fatalf("an answer with only the planted cookie: status %d, want 403", code)
	}
	if code := s.withCookies(t, http.MethodPost, "/api/asks/"+p.ID(), `{"option":"deny"}`, planted+"; "+real); code != http.StatusOK {
		t.Fatalf("the holder's answer behind a planted cookie: status %d, want 200", code)
	}
}

// plant posts n asks whose arguments text is size bytes.
func plant(t *testing.T, dir string, n, size int) {
	t.Helper()
	a := testAsk()
	a.Arguments = strings.Repeat("x", size)
	a.Options = append(a.Options, inbox.Option{ID: "always", Title: "Always allow"})
	for range n {
		post(t, dir, a)
	}
}

func TestThreeHundredPlantedAsksOfTwoHundredKBGiveABoundedList(t *testing.T) {
	t.Parallel()
	s := newTestSite(t, Defaults())
	plant(t, s.dir, 300, 200<<10)
	code, body, _ := s.do(t, req{path: "/api/asks"})
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	// Before the bounds this was 61 MB.
	if limit := maxAsksListed*maxAskShown + 64<<10; len(body) > limit {
		t.Errorf("/api/asks is %d bytes, want at most %d", len(body), limit)
	}
	var l askList
	if err := json.Unmarshal([]byte(body), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Asks) != maxAsksListed || l.More != 300-maxAsksListed {
		t.Errorf("listed %d asks and %d more, want %d and %d", len(l.Asks), l.More, maxAsksListed, 300-maxAsksListed)
	}
	a := l.Asks[0]
	if len(a.Arguments) > maxArgumentsShown+512 || !strings.Contains(a.Arguments, "bytes cut, sha256 ") {
		t.Errorf("an ask's arguments are %d bytes, want them cut with the digest of the whole: %.200q", len(a.Arguments), a.Arguments)
	}
	for _, o := range a.Options {
		if o.ID == "always" {
			t.Errorf("a cut ask still offers %q on the page", o.ID)
		}
	}
}

// liveHeapPeak samples the heap live after each GC while f runs (garbage
// awaiting collection is not held memory) and returns its peak.
func liveHeapPeak(f func()) uint64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	f()
	runtime.GC() // what f left live counts too
	close(stop)
	<-done
	return peak.Load()
}

func TestEightLiveStreamsOverPlantedAsksKeepTheHeapBounded(t *testing.T) {
	// Not parallel: it measures this process's heap.
	if raceEnabled {
		t.Skip("the race detector's memory makes heap figures meaningless (internal/e2e measures the real binary)")
	}
	s := newTestSite(t, Defaults())
	plant(t, s.dir, 300, 200<<10)
	runtime.GC()
	base := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(base)
	peak := liveHeapPeak(func() {
		var wg sync.WaitGroup
		for range maxLiveStreams {
			wg.Add(1)
			go func() {
				defer wg.Done()
				hr, _ := http.NewRequest(http.MethodGet, s.ts.URL+"/api/events", nil)
				hr.Host = s.listen
				hr.AddCookie(s.cookie)
				resp, err := http.DefaultClient.Do(hr)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				// Read past the first "asks" event (the "approvals" one
				// follows it), keeping nothing, then hang up.
				ev := &sse{r: bufio.NewReader(resp.Body), resp: resp}
				for {
					if name, _ := ev.next(t); name == "approvals" {
						return
					}
				}
			}()
		}
		wg.Wait()
	})
	// Unbounded, each stream held the 60 MB of asks (and their JSON) at
	// once: over 500 MB for eight.
	before := base[0].Value.Uint64()
	grew := int64(peak) - int64(before)
	t.Logf("live heap: %d KB before, peak %d KB with %d streams", before>>10, peak>>10, maxLiveStreams)
	if grew > 32<<20 {
		t.Errorf("the live heap grew by %d MB with %d streams over 300 planted asks of 200 KB; want under 32 MB", grew>>20, maxLiveStreams)
	}
}

func TestLiveStreamsBeyondTheBoundAreRefused(t *testing.T) {
	t.Parallel()
	s := newTestSite(t, Defaults())
	for range maxLiveStreams {
		s.stream(t).next(t)
	}
	code, body, _ := s.do(t, req{path: "/api/events"})
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "close a tab") {
		t.Fatalf("stream %d: status %d %s, want 503 saying what to do", maxLiveStreams+1, code, body)
	}
}

func TestAnOversizedAskFileIsRefusedUnreadAndLoggedOnce(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var mu sync.Mutex
	s := newTestSite(t, Defaults().WithLog(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))))
	name := strings.Repeat("a", 32) + ".json"
	if err := os.WriteFile(filepath.Join(s.dir, "asks", name), bytes.Repeat([]byte(" "), 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		code, body, _ := s.do(t, req{path: "/api/asks"})
		if code != http.StatusOK || !strings.Contains(body, "not read") {
			t.Fatalf("status %d %s, want the file skipped unread", code, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logs.String(), "skipped a file"); n != 1 || !strings.Contains(logs.String(), name) {
		t.Errorf("the oversized file is logged %d times, want once:\n%s", n, logs.String())
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func TestALiveStreamOutlivesTheServersReadTimeout(t *testing.T) {
	t.Parallel()
	dir := rendezvous(t)
	srv, err := New(dir, Defaults())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	listen := ts.Listener.Addr().String()
	hs := srv.HTTPServer(listen)
	hs.ReadTimeout = 300 * time.Millisecond
	ts.Config = hs
	ts.Start()
	t.Cleanup(func() { srv.Close(); ts.Close() })
	s := &testSite{srv: srv, ts: ts, dir: dir, listen: listen}
	s.cookie = s.login(t)
	ev := s.stream(t)
	ev.asks(t, func(l askList) bool { return len(l.Asks) == 0 })
	time.Sleep(4 * hs.ReadTimeout)
	p := post(t, dir, testAsk())
	if l := ev.asks(t, func(l askList) bool { return len(l.Asks) == 1 }); l.Asks[0].ID != p.ID() {
		t.Fatalf("asks %+v", l.Asks)
	}
}

func TestHTTPServerClosesASlowHeaderConnection(t *testing.T) {
	t.Parallel()
	srv, err := New(rendezvous(t), Defaults())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := srv.HTTPServer(ln.Addr().String())
	if hs.ReadHeaderTimeout == 0 || hs.ReadTimeout == 0 || hs.IdleTimeout == 0 || hs.MaxHeaderBytes == 0 || hs.WriteTimeout != 0 {
		t.Fatalf("limits %+v", hs)
	}
	hs.ReadHeaderTimeout = 200 * time.Millisecond
	go hs.Serve(ln)
	t.Cleanup(func() { srv.Close(); hs.Close() })
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: "+ln.Addr().String()+"\r\n")
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("the connection was not closed: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("closed after %v", took)
	}
}
