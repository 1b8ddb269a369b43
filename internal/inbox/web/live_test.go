package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// sse reads events from the live stream.
type sse struct {
	r    *bufio.Reader
	resp *http.Response
}

func (s *testSite) stream(t *testing.T) *sse {
	t.Helper()
	hr, _ := http.NewRequest(http.MethodGet, s.ts.URL+"/api/events", nil)
	hr.Host = s.listen
	hr.AddCookie(s.cookie)
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return &sse{r: bufio.NewReader(resp.Body), resp: resp}
}

// next returns the next event's name and data.
func (e *sse) next(t *testing.T) (string, string) {
	t.Helper()
	var name, data string
	for {
		line, err := e.r.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && name != "":
			return name, data
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
}

// asks waits for an "asks" event for which ok holds.
func (e *sse) asks(t *testing.T, ok func(askList) bool) askList {
	t.Helper()
	for {
		name, data := e.next(t)
		if name != "asks" {
			continue
		}
		var l askList
		if err := json.Unmarshal([]byte(data), &l); err != nil {
			t.Fatalf("asks event %q: %v", data, err)
		}
		if ok(l) {
			return l
		}
	}
}

func TestTheLiveStreamShowsAsksComeAndGo(t *testing.T) {
	s := newTestSite(t, Defaults())
	ev := s.stream(t)
	ev.asks(t, func(l askList) bool { return len(l.Asks) == 0 })
	p := post(t, s.dir, testAsk())
	l := ev.asks(t, func(l askList) bool { return len(l.Asks) == 1 })
	if l.Asks[0].ID != p.ID() || l.Now.IsZero() {
		t.Fatalf("asks event %+v", l)
	}
	q := post(t, s.dir, testAsk())
	ev.asks(t, func(l askList) bool { return len(l.Asks) == 2 })
	p.Close()
	l = ev.asks(t, func(l askList) bool { return len(l.Asks) == 1 })
	if l.Asks[0].ID != q.ID() {
		t.Errorf("left %+v; want %s", l.Asks, q.ID())
	}
}

func TestClosingTheServerEndsTheLiveStreams(t *testing.T) {
	s := newTestSite(t, Defaults())
	ev := s.stream(t)
	ev.next(t)
	s.srv.Close()
	for {
		if _, err := ev.r.ReadString('\n'); err != nil {
			return // ended
		}
	}
}

func TestTheLiveStreamEndsWithTheRequest(t *testing.T) {
	s := newTestSite(t, Defaults())
	ctx, cancel := context.WithCancel(context.Background())
	hr, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.ts.URL+"/api/events", nil)
	hr.Host = s.listen
	hr.AddCookie(s.cookie)
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
}
