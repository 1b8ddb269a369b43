package e2e

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx", to read Postgres's own counters
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// BenchmarkStoreServeAB compares, in one run, a plain allowed call
// through `toolwarden serve` on a Postgres store against the same call
// through serve on a SQLite store (its default) and with no store, with 48 sessions in a closed loop each;
// with TOOLWARDEN_BENCH_STORE_B set to another toolwarden binary, a
// third case runs that binary on the same store, so a change is measured
// as a ratio against the build before it (rounds rotate between the
// cases). Besides calls/s, p50 and CPU per call, it reports what each
// call cost Postgres by the server's own counters: connections opened
// (a pool that closes and reopens connections pays a backend and an
// authentication for each) and transactions committed.
//
//	go build -o /tmp/tw-before ./cmd/toolwarden   # at the commit before
//	TOOLWARDEN_BENCH_STORE_B=/tmp/tw-before go test ./internal/e2e -run '^$' -bench 'BenchmarkStoreServeAB$' -benchtime 3x
func BenchmarkStoreServeAB(b *testing.B) {
	const sessions, k = 48, 16
	db := pgtest.Shared(b)
	f := newStoreFleet(b, db.URL)
	a := f.start(b)
	alone := f.startAlone(b)
	type target struct {
		name string
		url  string
		pid  int
	}
	// serve's default engine: a SQLite file.
	sq := launchServe(b, twBin, nil, "--listen", "127.0.0.1:0", "--config", f.cfg,
		"--store", "sqlite:"+b.TempDir()+"/store.db", "--audit", b.TempDir()+"/audit.jsonl")
	sq.waitListening(b)
	f.waitReady(b, sq)
	targets := []target{{"store", a.url, a.cmd.Process.Pid}, {"nostore", alone.url, alone.cmd.Process.Pid}, {"sqlite", sq.url, sq.cmd.Process.Pid}}
	if alt := os.Getenv("TOOLWARDEN_BENCH_STORE_B"); alt != "" {
		s := launchServe(b, alt, nil, "--listen", "127.0.0.1:0", "--config", f.cfg, "--store", f.store,
			"--audit", b.TempDir()+"/audit.jsonl")
		s.waitListening(b)
		f.waitReady(b, s)
		targets = append(targets, target{"store-B", s.url, s.cmd.Process.Pid})
	}
	stats := openPgStats(b, db)
	auth := transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer alice-token"})
	loads := make([]*benchLoad, len(targets))
	for i, t := range targets {
		hc := benchHTTPClient(sessions)
		ss := make([]*client.Client, sessions)
		for j := range ss {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			s, err := openBenchSession(ctx, t.url, hc, legacyEra, auth)
			cancel()
			if err != nil {
				b.Fatalf("%s: session %d: %v", t.name, j, err)
			}
			ss[j] = s
		}
		b.Cleanup(func() {
			for _, s := range ss {
				_ = s.Close()
			}
		})
		loads[i] = &benchLoad{c: benchCase{name: t.name, tool: "up__echo", pid: t.pid}, sessions: ss}
		loads[i].reset()
		loads[i].round(b, 2, false)
	}
	pg := make([]pgCounters, len(loads))
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for j := range loads {
			x := (n + j) % len(loads)
			before := stats.read(b)
			loads[x].round(b, k, true)
			b.StopTimer()
			pg[x] = pg[x].add(stats.read(b).minus(before))
			b.StartTimer()
		}
	}
	b.StopTimer()
	perSec := map[string]float64{}
	for i, l := range loads {
		fig := l.figures(1)
		perSec[l.c.name] = fig.perSecPerCPU
		b.ReportMetric(fig.perSecPerCPU, l.c.name+"-calls/s")
		b.ReportMetric(benchMS(fig.p50), l.c.name+"-p50-ms")
		b.ReportMetric(float64(fig.cpuPerCall.Microseconds()), l.c.name+"-cpu-µs/call")
		if l.c.name != "nostore" && l.c.name != "sqlite" && l.calls > 0 {
			b.ReportMetric(float64(pg[i].conns)/float64(l.calls), l.c.name+"-pg-conns/call")
			b.ReportMetric(float64(pg[i].commits)/float64(l.calls), l.c.name+"-pg-commits/call")
		}
		if l.errs > 0 {
			b.Errorf("%s: %d of %d calls went wrong; the first: %s", l.c.name, l.errs, l.calls, l.firstErr)
		}
		if n := l.twice(); n > 0 {
			b.Errorf("%s: %d calls were answered more than once", l.c.name, n)
		}
	}
	b.ReportMetric(perSec["store"]/perSec["nostore"], "store/nostore")
	b.ReportMetric(perSec["sqlite"]/perSec["nostore"], "sqlite/nostore")
	if perSec["store-B"] > 0 {
		b.ReportMetric(perSec["store"]/perSec["store-B"], "store/store-B")
		b.ReportMetric(perSec["store-B"]/perSec["nostore"], "store-B/nostore")
	}
	b.ReportMetric(0, "ns/op")
}

// pgStats reads the database's counters (pg_stat_database) on a
// connection of its own, which it holds so as not to count itself.
type pgStats struct {
	conn *sql.Conn
	name string
}

type pgCounters struct{ conns, commits int64 }

func (c pgCounters) add(d pgCounters) pgCounters {
	return pgCounters{c.conns + d.conns, c.commits + d.commits}
}

func (c pgCounters) minus(d pgCounters) pgCounters {
	return pgCounters{c.conns - d.conns, c.commits - d.commits}
}

func openPgStats(b *testing.B, db *pgtest.DB) *pgStats {
	b.Helper()
	sdb, err := sql.Open("pgx", db.URL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sdb.Close() })
	conn, err := sdb.Conn(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	return &pgStats{conn: conn, name: db.Name}
}

// read waits out the server's delay in publishing counters (a backend
// reports at most once a second) and reads them.
func (p *pgStats) read(b *testing.B) pgCounters {
	b.Helper()
	time.Sleep(1100 * time.Millisecond)
	var c pgCounters
	ctx := context.Background()
	if _, err := p.conn.ExecContext(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
		b.Fatal(err)
	}
	if err := p.conn.QueryRowContext(ctx, "SELECT sessions, xact_commit FROM pg_stat_database WHERE datname = $1", p.name).Scan(&c.conns, &c.commits); err != nil {
		b.Fatal(err)
	}
	return c
}
