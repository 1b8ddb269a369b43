package serve

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/store/pgtest"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// probe GETs path from h and returns the status and body.
func probe(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Body)
	return rec.Code, string(b)
}

// A replica whose Postgres store is stopped is not ready (503, the store
// named unreachable, not its URL, password or error), is still alive
// (/healthz 200), and is ready again once Postgres is back: all without
// restarting serve.
func TestReadyzIsNotReadyWhileTheStoreIsDownAndHealthzStaysAlive(t *testing.T) {
	t.Parallel()
	cluster := pgtest.Start(t) // its own: this test stops it
	db := cluster.CreateDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := store.Open(ctx, cluster.URL(db), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s := New(testhost.New(t, "", host.Defaults().WithStore(st)), nil, Options{Store: st})
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	h := s.Handler()

	if code, body := probe(t, h, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz with the store up: %d %s", code, body)
	}
	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	var code int
	var body string
	deadline := time.Now().Add(2500 * time.Millisecond)
	for code, body = probe(t, h, "/readyz"); code == http.StatusOK && time.Now().Before(deadline); code, body = probe(t, h, "/readyz") {
		time.Sleep(50 * time.Millisecond)
	}
	var got readiness
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("/readyz body %q: %v", body, err)
	}
	if code != http.StatusServiceUnavailable || got.Ready || got.Store != "unreachable" {
		t.Fatalf("/readyz with the store stopped for 2.5 s: %d %s, want 503 naming the store unreachable", code, body)
	}
	for _, secret := range []string{cluster.Password(), strconv.Itoa(cluster.Port()), db, "127.0.0.1"} {
		if strings.Contains(body, secret) {
			t.Errorf("the unauthenticated /readyz body tells %q: %s", secret, body)
		}
	}
	if code, body := probe(t, h, "/healthz"); code != http.StatusOK || body != "ok" {
		t.Errorf("/healthz with the store down: %d %q, want 200 ok (an outage must not restart the replica)", code, body)
	}

	if err := cluster.Start(); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for code, body = probe(t, h, "/readyz"); code != http.StatusOK && time.Now().Before(deadline); code, body = probe(t, h, "/readyz") {
		time.Sleep(100 * time.Millisecond)
	}
	if code != http.StatusOK {
		t.Fatalf("/readyz 30 s after Postgres came back: %d %s", code, body)
	}
}

// fakePinger counts the looks at a store that answers as told.
type fakePinger struct {
	looks int
	err   error
}

func (f *fakePinger) Ping(context.Context) error { f.looks++; return f.err }
func (f *fakePinger) URL() string                { return "postgres://u:xxxxx@db/tw" }

// Many probes within a second cost the store one query: probes from
// several load balancers must not hammer the database.
func TestTheStoreProbeLooksAtTheStoreAtMostOnceASecond(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	p := &fakePinger{}
	sp := newStoreProbe(p, slog.New(slog.NewTextHandler(io.Discard, nil)))
	sp.now = func() time.Time { return now }
	for range 50 {
		if sp.down() {
			t.Fatal("down while the store answers")
		}
	}
	if p.looks != 1 {
		t.Fatalf("50 probes in one instant looked at the store %d times, want 1", p.looks)
	}
	p.err = context.DeadlineExceeded
	now = now.Add(storeProbeEvery)
	if !sp.down() || p.looks != 2 {
		t.Fatalf("a second later with the store failing: down %v after %d looks, want down after 2", sp.down(), p.looks)
	}
}
