package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// benchHTTPClient is what one case's clients share: a connection pool big
// enough that every session in flight keeps its connection (Go's default
// keeps 2 idle per host, and the rest would be reopened call after call).
func benchHTTPClient(sessions int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 0, sessions+16
	return &http.Client{Transport: tr}
}

// openBenchSession connects mcp-go's streamable HTTP client to url in the
// given protocol era and fails unless that era is what was negotiated (a
// 2026-07-28 client falls back to the handshake when the server is older).
func openBenchSession(ctx context.Context, url string, hc *http.Client, era string, extra ...transport.StreamableHTTPCOption) (*client.Client, error) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := append([]transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(hc), transport.WithHTTPLogger(quiet)}, extra...)
	tr, err := transport.NewStreamableHTTP(url, opts...)
	if err != nil {
		return nil, err
	}
	c := client.NewClient(tr, client.WithProtocolVersion(era))
	// Start's context is the GET stream's (when listening), which lives as
	// long as the session, not as long as opening it.
	if err := c.Start(context.Background()); err != nil {
		return nil, err
	}
	res, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "bench", Version: "1"},
	}})
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("initialize at %s: %w", url, err)
	}
	if res.ProtocolVersion != era {
		_ = c.Close()
		return nil, fmt.Errorf("%s negotiated protocol %s, not %s", url, res.ProtocolVersion, era)
	}
	return c, nil
}

// openBenchSessions opens n sessions to c, a few at a time, each with the
// HTTP client hc gives it and the extra transport options; they are closed
// when owner ends.
func openBenchSessions(b, owner *testing.B, c benchCase, n int, era string, hc func() *http.Client, extra ...transport.StreamableHTTPCOption) []*client.Client {
	b.Helper()
	out := make([]*client.Client, n)
	hcs := make([]*http.Client, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			hcs[i] = hc()
			s, err := openBenchSession(ctx, c.url, hcs[i], era, extra...)
			if err != nil {
				errs <- err
				return
			}
			out[i] = s
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatalf("%s: opening %d sessions: %v (and %d more failed)", c.name, n, err, len(errs))
	}
	owner.Cleanup(func() {
		for i, s := range out {
			_ = s.Close()
			hcs[i].CloseIdleConnections() // their buffers and goroutines too, before the next run measures
		}
	})
	return out
}

// benchSeq numbers every call the benchmarks make: no two calls to the
// upstream, which outlives each load, carry the same message.
var benchSeq atomic.Int64

// benchLoad is one case's sessions, each calling echo in a loop, and what
// their calls measured over all rounds.
type benchLoad struct {
	c        benchCase
	sessions []*client.Client

	mu       sync.Mutex
	lat      []time.Duration // of the calls answered right
	answers  map[string]int  // echoed message -> times an answer carried it
	errs     int             // calls failed, or answered with something else than their own echo
	firstErr string
	calls    int
	wall     time.Duration      // summed over the rounds
	cpu      time.Duration      // the case's process, summed over the rounds
	rounds   [][2]time.Duration // each round's p50 and p99, for same-round ratios
}

// round makes every session call k times in a closed loop, all sessions at
// once, and adds what it measured.
func (l *benchLoad) round(b *testing.B, k int, record bool) {
	lats := make([][]time.Duration, len(l.sessions))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range l.sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for range k {
				if d, ok := l.call(i, s); ok {
					lats[i] = append(lats[i], d)
				}
			}
		}()
	}
	cpu0 := benchProcCPU(b, l.c.pid)
	t0 := time.Now()
	close(start)
	wg.Wait()
	wall := time.Since(t0)
	cpu := benchProcCPU(b, l.c.pid) - cpu0
	if !record {
		return
	}
	var this []time.Duration
	for _, ls := range lats {
		this = append(this, ls...)
	}
	slices.Sort(this)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lat = append(l.lat, this...)
	l.rounds = append(l.rounds, [2]time.Duration{benchPercentile(this, 0.50), benchPercentile(this, 0.99)})
	l.calls += k * len(l.sessions)
	l.wall += wall
	l.cpu += cpu
}

// call makes one tools/call whose argument no other call carries, and
// checks the answer is that argument's echo, run once by the upstream.
func (l *benchLoad) call(session int, s *client.Client) (time.Duration, bool) {
	return l.callWith(fmt.Sprintf("%s-%d-%d", l.c.name, session, benchSeq.Add(1)), s)
}

// callWith is call with the message given.
func (l *benchLoad) callWith(msg string, s *client.Client) (time.Duration, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t0 := time.Now()
	res, err := s.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: l.c.tool, Arguments: map[string]any{"message": msg}}})
	d := time.Since(t0)
	text, problem := benchEchoAnswer(res, err)
	echoed, seen := benchParseEcho(text)
	l.mu.Lock()
	defer l.mu.Unlock()
	if echoed != "" {
		l.answers[echoed]++
	}
	switch {
	case problem != "":
	case echoed != msg:
		problem = fmt.Sprintf("call %q was answered %q", msg, text)
	case seen != 1:
		problem = fmt.Sprintf("call %q ran %d times upstream", msg, seen)
	}
	if problem != "" {
		// How long it took says which bound fired, if any (an answer cut at
		// once, or after a timeout).
		l.failLocked(fmt.Sprintf("%s (after %s)", problem, d.Round(time.Millisecond)))
		return d, false
	}
	return d, true
}

func (l *benchLoad) fail(problem string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failLocked(problem)
}

func (l *benchLoad) failLocked(problem string) {
	l.errs++
	if l.firstErr == "" {
		l.firstErr = problem
	}
}

// reset forgets what earlier runs measured.
func (l *benchLoad) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lat, l.answers, l.errs, l.firstErr, l.calls, l.wall, l.cpu, l.rounds = nil, map[string]int{}, 0, "", 0, 0, 0, nil
}

// benchEchoAnswer is the text of a call's result, or what went wrong.
func benchEchoAnswer(res *mcp.CallToolResult, err error) (text, problem string) {
	if err != nil {
		return "", "call failed: " + err.Error()
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	text = strings.Join(texts, "\n")
	if res.IsError {
		return text, "tool error: " + text
	}
	return text, ""
}

// benchParseEcho reads "echo: <message> (seen N)", testserver -count-echo's answer.
func benchParseEcho(text string) (msg string, seen int) {
	body, ok := strings.CutPrefix(text, "echo: ")
	if !ok {
		return "", 0
	}
	i := strings.LastIndex(body, " (seen ")
	if i < 0 {
		return "", 0
	}
	if _, err := fmt.Sscanf(body[i:], " (seen %d)", &seen); err != nil {
		return "", 0
	}
	return body[:i], seen
}

// twice counts the messages some answer carried more than once: a call
// answered twice, or an answer delivered to another call as well.
func (l *benchLoad) twice() int {
	n := 0
	for _, c := range l.answers {
		if c > 1 {
			n++
		}
	}
	return n
}

// benchPercentile is the q-quantile (0 < q <= 1) of sorted, by the nearest rank.
func benchPercentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(float64(len(sorted))*q+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// benchFigures are one case's results.
type benchFigures struct {
	p50, p99     time.Duration
	perSecPerCPU float64
	cpuPerCall   time.Duration
}

func (l *benchLoad) figures(cpus int) benchFigures {
	s := slices.Clone(l.lat)
	slices.Sort(s)
	f := benchFigures{p50: benchPercentile(s, 0.50), p99: benchPercentile(s, 0.99)}
	if l.wall > 0 {
		f.perSecPerCPU = float64(l.calls) / l.wall.Seconds() / float64(cpus)
	}
	if l.calls > 0 {
		f.cpuPerCall = l.cpu / time.Duration(l.calls)
	}
	return f
}
