package serve

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestARequestOverThePrincipalsRateIs429WithRetryAfterAndAnRPCErrorUnderItsID(t *testing.T) {
	t.Parallel()
	f := startFront(t, echoHandler, frontSetup{perSecond: 0.5, burst: 2, principals: []string{"alice"}})
	for i := range 2 {
		if resp, b := post(t, http.DefaultClient, f.url, "alice", callBody); resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d within the burst: %d %s", i, resp.StatusCode, b)
		}
	}
	resp, b := post(t, http.DefaultClient, f.url, "alice", callBody)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the call past the burst: status %d, want 429: %s", resp.StatusCode, b)
	}
	if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 2 {
		t.Errorf("Retry-After %q, want 1 or 2 seconds (one token every 2 s)", resp.Header.Get("Retry-After"))
	}
	id, code, msg := rpcError(t, b)
	if string(id) != "7" || code != rateLimitCode {
		t.Errorf("id %s code %d, want the request's id 7 and %d", id, code, rateLimitCode)
	}
	for _, want := range []string{`"alice"`, "0.5 requests a second", "bursts of 2", "calls_per_second", "[serve.rate_limit]"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
}

func TestAnswersAndNotificationsAreNeverRateLimited(t *testing.T) {
	t.Parallel()
	// A human's answer to an elicitation is a response; a cancellation is
	// a notification. Refusing either would lose it.
	f := startFront(t, echoHandler, frontSetup{perSecond: 0.1, burst: 1, principals: []string{"bob"}})
	post(t, http.DefaultClient, f.url, "bob", callBody) // spends the one token
	if resp, _ := post(t, http.DefaultClient, f.url, "bob", callBody); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("the limit is not in force: %d", resp.StatusCode)
	}
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"decision":"once"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
	} {
		for range 3 {
			if resp, b := post(t, http.DefaultClient, f.url, "bob", m); resp.StatusCode != http.StatusOK {
				t.Errorf("%s was refused: %d %s", m, resp.StatusCode, b)
			}
		}
	}
}

func TestOnePrincipalsFloodDoesNotSlowAnothersCalls(t *testing.T) {
	t.Parallel()
	f := startFront(t, echoHandler, frontSetup{perSecond: 20, burst: 40, principals: []string{"flood", "calm"}})
	stop := make(chan struct{})
	var refused, flooded atomic.Int64
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	flooder := &http.Client{Transport: tr}
	for range 16 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodPost, f.url+"/mcp", strings.NewReader(callBody))
				req.Header.Set("Authorization", "Bearer tok-flood")
				resp, err := flooder.Do(req)
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				flooded.Add(1)
				if resp.StatusCode == http.StatusTooManyRequests {
					refused.Add(1)
				}
			}
		})
	}
	time.Sleep(300 * time.Millisecond) // the flood's burst is spent
	calm := &http.Client{Transport: &http.Transport{}}
	var worst time.Duration
	var calmRefused []string
	for i := range 30 {
		t0 := time.Now()
		resp, b := post(t, calm, f.url, "calm", callBody)
		if resp.StatusCode != http.StatusOK {
			calmRefused = append(calmRefused, fmt.Sprintf("call %d: %d %s", i, resp.StatusCode, b))
		}
		worst = max(worst, time.Since(t0))
		time.Sleep(60 * time.Millisecond) // 16 a second: under calm's own rate
	}
	close(stop)
	wg.Wait()
	if len(calmRefused) > 0 {
		t.Fatalf("the calm principal was refused during the other's flood: %v", calmRefused)
	}
	if refused.Load() == 0 {
		t.Fatalf("the flood (%d requests) was never limited", flooded.Load())
	}
	if worst > time.Second {
		t.Errorf("the calm principal's slowest call took %s during the flood", worst)
	}
	t.Logf("flood: %d requests, %d refused; calm's slowest call %s", flooded.Load(), refused.Load(), worst)
}

func TestIdlePrincipalsBucketsAreForgottenSoMemoryStaysBounded(t *testing.T) {
	t.Parallel()
	l := newRateLimits(10, 5) // an empty bucket is full again after 0.5 s; idle is at least 1 s
	t0 := time.Now()
	for i := range 10000 {
		l.allow(fmt.Sprintf("p%d", i), t0)
	}
	if n := l.size(); n != 10000 {
		t.Fatalf("%d buckets for 10000 active principals", n)
	}
	later := t0.Add(2 * time.Second)
	if ok, _ := l.allow("p1", later); !ok {
		t.Fatal("p1 refused after a long idle time")
	}
	if n := l.size(); n != 1 {
		t.Errorf("%d buckets held after the others were idle past their refill time, want 1", n)
	}
	// Forgetting changed nothing: a forgotten principal gets its full burst.
	for i := range 5 {
		if ok, _ := l.allow("p2", later); !ok {
			t.Errorf("p2's request %d of its burst was refused after it was forgotten", i)
		}
	}
	if ok, _ := l.allow("p2", later); ok {
		t.Error("p2 got more than its burst")
	}
}

func TestNoRateMeansNoLimit(t *testing.T) {
	t.Parallel()
	if newRateLimits(0, 40) != nil || newRateLimits(-1, 0) != nil {
		t.Error("a rate of 0 or less made a limiter")
	}
}
