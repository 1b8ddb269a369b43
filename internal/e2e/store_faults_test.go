package e2e

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the test reads and locks the store's SQLite file as another process would

	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// Faults of the store's parts, through the real binary: a replica killed
// mid-call, Postgres stopped mid-run, a SQLite store across restarts, and
// a SQLite file that is corrupt, from a newer toolwarden, or locked.

// A replica killed with SIGKILL while a call is in flight takes nothing
// with it: the "always" grant and the conversation taint it was told just
// before hold on the replicas left, which keep serving; the audit records
// it had written are in the store.
func TestAReplicaKilledMidCallLosesNothingItGrantedOrRecorded(t *testing.T) {
	t.Parallel()
	db := pgtest.Shared(t)
	f := newStoreFleet(t, db.URL)
	a, b, c := f.start(t), f.start(t), f.start(t)

	onA := alwaysAndTaint(t, a, "granted-by-A", "tainted-on-A")
	// The store's audit sink batches; a second is well beyond its flush
	// interval, so what A wrote until now must be in the store.
	time.Sleep(time.Second)
	written := auditKeys(t, a.audit)

	inFlight := make(chan string, 1)
	go func() {
		out, _ := onA.call(t, "up__slow", map[string]any{"ms": 30000})
		inFlight <- out
	}()
	a.awaitChecked(t, "slow")
	a.kill(t)
	select {
	case out := <-inFlight:
		if strings.Contains(out, "slept") {
			t.Fatalf("the call in flight on the killed replica was answered as done: %q", out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the client of the killed replica was not told its call failed")
	}

	askB := answers("deny")
	if out, isErr := storeClient(t, b, modernEra, "alice-token", askB).call(t, "gate__echo", map[string]any{"message": "after-kill-B"}); isErr || out != "echo: after-kill-B (seen 1)" || askB.count() != 0 {
		t.Fatalf("alice's grant given on the killed replica, on B: %q (error %v, asked %d)", out, isErr, askB.count())
	}
	r := storeCall(t, c, "alice-token", "tainted-on-A", "tri__echo", map[string]any{"message": "after-kill-exfil"}, nil)
	if !r.isError() || !strings.Contains(r.text(), "lethal_trifecta") {
		t.Fatalf("the taint recorded by the killed replica, on C: want a trifecta deny, got %s", r.body)
	}
	if r := storeCall(t, c, "bob-token", "", "up__echo", map[string]any{"message": "after-kill-C"}, nil); !seenOnce(r, "after-kill-C") {
		t.Fatalf("C after A was killed: %s", r.body)
	}
	stored := storeAuditKeys(t, func() string {
		out, err := db.Cluster.Query(db.Name, "SELECT record FROM tw_audit")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}())
	var lost []string
	for _, k := range written {
		if !slices.Contains(stored, k) {
			lost = append(lost, k)
		}
	}
	if len(written) == 0 || len(lost) > 0 {
		t.Fatalf("of the %d audit records the killed replica wrote a second before it died, %d are not in the store: %v", len(written), len(lost), lost)
	}
	// The check record of the call in flight was written a moment before
	// the kill: the file has it; the store has it if the sink flushed in
	// time (the fault table reports which).
	var inStore int
	final := auditKeys(t, a.audit)
	for _, k := range final[len(written):] {
		if slices.Contains(stored, k) {
			inStore++
		}
	}
	t.Logf("records the killed replica wrote in its last second: %d in its audit file, %d of them in the store", len(final)-len(written), inStore)
}

// auditKeys reads an audit log file: one "time event session" key a
// record.
func auditKeys(t testing.TB, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return storeAuditKeys(t, string(b))
}

// storeAuditKeys reads audit records, one JSON object a line.
func storeAuditKeys(t testing.TB, lines string) []string {
	t.Helper()
	var keys []string
	for _, line := range strings.Split(lines, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r struct {
			Time    time.Time `json:"time"`
			Event   string    `json:"event"`
			Session string    `json:"session"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("an audit record that is not JSON: %v: %q", err, line)
		}
		keys = append(keys, fmt.Sprintf("%s %s %s", r.Time.UTC().Format(time.RFC3339Nano), r.Event, r.Session))
	}
	return keys
}

// Postgres stopped mid-run: no replica allows anything on the state it
// last saw (a call that would use a remembered approval is asked or
// refused, a plain call is refused with a reason that names the store, an
// approval sent with a request state is refused), the upstream runs
// nothing; and once Postgres is back, the same replicas (not restarted)
// serve again with the grant intact.
func TestPostgresStoppedMidRunAllowsNothingOnStaleStateAndServiceRecoversWhenItReturns(t *testing.T) {
	t.Parallel()
	cluster := pgtest.Start(t) // its own: this test stops it
	f := newStoreFleet(t, cluster.URL(cluster.CreateDB(t)))
	a, b := f.start(t), f.start(t)
	pids := []int{a.cmd.Process.Pid, b.cmd.Process.Pid}

	ask := answers("always")
	if out, isErr := storeClient(t, a, legacyEra, "alice-token", ask).call(t, "gate__echo", map[string]any{"message": "before-outage"}); isErr || ask.count() != 1 {
		t.Fatalf("alice's always on A: %q (error %v, asked %d)", out, isErr, ask.count())
	}
	askB := answers("deny", "deny", "deny")
	onB := storeClient(t, b, legacyEra, "alice-token", askB)
	if out, isErr := onB.call(t, "gate__echo", map[string]any{"message": "warm-B"}); isErr || askB.count() != 0 {
		t.Fatalf("alice's grant on B before the outage: %q (error %v, asked %d)", out, isErr, askB.count())
	}
	pending := storeCall(t, a, "bob-token", "", "gate__echo", map[string]any{"message": "state-across-outage"}, nil)
	if !asked(pending) {
		t.Fatalf("bob was not asked: %s", pending.body)
	}

	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	for i, s := range []*opsServe{a, b} {
		msg := fmt.Sprintf("outage-gate-%d", i)
		r := storeCall(t, s, "alice-token", "", "gate__echo", map[string]any{"message": msg}, nil)
		if strings.Contains(r.text(), "(seen") || !(asked(r) || r.isError()) {
			t.Errorf("replica %d ran a call on a remembered approval with the store down: %s", i, r.body)
		}
		if i == 0 {
			t.Logf("a call a remembered approval would allow, with the store down (asked %v): %s", asked(r), r.text())
		}
		msg = fmt.Sprintf("outage-plain-%d", i)
		r = storeCall(t, s, "alice-token", "", "up__echo", map[string]any{"message": msg}, nil)
		if !r.isError() || strings.Contains(r.text(), "(seen") || !strings.Contains(r.text(), "store") {
			t.Errorf("replica %d with the store down: a plain call not refused with the store named: %s", i, r.body)
		}
		if strings.Contains(r.body, cluster.Password()) {
			t.Errorf("replica %d told a client the store's password: %s", i, r.body)
		}
	}
	if out, isErr := onB.call(t, "gate__echo", map[string]any{"message": "outage-session-B"}); !isErr || strings.Contains(out, "(seen") {
		t.Errorf("B's open session ran a call on a remembered approval with the store down: %q", out)
	}
	r := storeCall(t, b, "bob-token", "", "gate__echo", map[string]any{"message": "state-across-outage"}, answered(pending, "allow_once"))
	if !r.isError() || strings.Contains(r.text(), "(seen") {
		t.Errorf("an approval redeemed with the store down was not refused: %s", r.body)
	}
	t.Logf("with the store down, /readyz answers A %d, B %d", readyz(a), readyz(b))

	if err := cluster.Start(); err != nil {
		t.Fatal(err)
	}
	up := time.Now()
	var last coreHTTP
	eventually(t, 30*time.Second, "the replicas to serve again", func() bool {
		last = storeCall(t, b, "alice-token", "", "up__echo", map[string]any{"message": fmt.Sprintf("back-%d", time.Now().UnixNano())}, nil)
		return !last.isError()
	})
	t.Logf("down for %s; served again %s after Postgres came back", up.Sub(down).Round(time.Millisecond), time.Since(up).Round(time.Millisecond))
	askA := answers("deny")
	if out, isErr := storeClient(t, a, modernEra, "alice-token", askA).call(t, "gate__echo", map[string]any{"message": "after-outage-A"}); isErr || out != "echo: after-outage-A (seen 1)" || askA.count() != 0 {
		t.Fatalf("alice's grant after the outage, on A: %q (error %v, asked %d)", out, isErr, askA.count())
	}
	// Every call refused during the outage never reached the upstream.
	for _, msg := range []string{"outage-gate-0", "outage-gate-1", "outage-plain-0", "outage-plain-1", "outage-session-B"} {
		if r := storeCall(t, a, "alice-token", "", "up__echo", map[string]any{"message": msg}, nil); !seenOnce(r, msg) {
			t.Errorf("%s reached the upstream during the outage: %s", msg, r.body)
		}
	}
	for i, s := range []*opsServe{a, b} {
		select {
		case <-s.exited:
			t.Fatalf("replica %d exited during the outage:\n%s", i, s.log.String())
		default:
		}
		if s.cmd.Process.Pid != pids[i] {
			t.Fatalf("replica %d was restarted", i)
		}
	}
}

// A SQLite store keeps everything across serve restarts, graceful
// (SIGTERM) or not (SIGKILL): "always" grants, a conversation's taint, and
// the audit records.
func TestASQLiteStoreKeepsGrantsTaintAndAuditAcrossRestarts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "store.db")
	f := newStoreFleet(t, "sqlite:"+path)
	first := f.start(t)
	alwaysAndTaint(t, first, "sqlite-grant", "sqlite-taint")
	first.stop(t)
	written := auditKeys(t, first.audit)

	second := f.start(t)
	checkKept := func(s *opsServe, msg string) {
		t.Helper()
		askAgain := answers("deny")
		if out, isErr := storeClient(t, s, modernEra, "alice-token", askAgain).call(t, "gate__echo", map[string]any{"message": msg}); isErr || out != "echo: "+msg+" (seen 1)" || askAgain.count() != 0 {
			t.Fatalf("alice's grant after a restart: %q (error %v, asked %d)", out, isErr, askAgain.count())
		}
		r := storeCall(t, s, "alice-token", "sqlite-taint", "tri__echo", map[string]any{"message": msg + "-exfil"}, nil)
		if !r.isError() || !strings.Contains(r.text(), "lethal_trifecta") {
			t.Fatalf("the conversation's taint after a restart: want a trifecta deny, got %s", r.body)
		}
	}
	checkKept(second, "after-sigterm")
	stored := sqliteAuditKeys(t, path)
	for _, k := range written {
		if !slices.Contains(stored, k) {
			t.Errorf("an audit record of the first run is not in the store after a graceful restart: %s", k)
		}
	}
	bobAsk := answers("always")
	if out, isErr := storeClient(t, second, legacyEra, "bob-token", bobAsk).call(t, "gate__echo", map[string]any{"message": "bob-before-kill"}); isErr || bobAsk.count() != 1 {
		t.Fatalf("bob's always: %q (error %v, asked %d)", out, isErr, bobAsk.count())
	}
	second.kill(t)
	third := f.start(t)
	checkKept(third, "after-sigkill")
	bobAgain := answers("deny")
	if out, isErr := storeClient(t, third, modernEra, "bob-token", bobAgain).call(t, "gate__echo", map[string]any{"message": "bob-after-kill"}); isErr || bobAgain.count() != 0 {
		t.Fatalf("bob's grant, given just before a SIGKILL, after the restart: %q (error %v, asked %d)", out, isErr, bobAgain.count())
	}
}

// sqliteAuditKeys reads the audit records of the SQLite store at path,
// read-only.
func sqliteAuditKeys(t testing.TB, path string) []string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT record FROM tw_audit")
	if err != nil {
		t.Fatalf("reading tw_audit of %s: %v", path, err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var rec string
		if err := rows.Scan(&rec); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, rec)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return storeAuditKeys(t, strings.Join(lines, "\n"))
}

// A SQLite file serve cannot use (not a database, a database cut short,
// one from a newer toolwarden) stops serve at start with an error that
// names the file and says what is wrong, before it listens; the file's
// bytes, and the folder's contents, are unchanged.
func TestAnUnusableSQLiteFileStopsServeWithAClearErrorAndIsLeftAsItWas(t *testing.T) {
	t.Parallel()
	good := filepath.Join(t.TempDir(), "good.db")
	makeSQLiteStore(t, good)
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(t.TempDir(), "newer.db")
	makeSQLiteStore(t, newer)
	execSQLite(t, newer, "INSERT INTO tw_migrations (version, name, applied_at) VALUES (999, 'from a newer toolwarden', 0)")
	for _, tc := range []struct {
		name  string
		bytes []byte // written to store.db; nil: use path as it is
		path  string
		want  []string // in serve's error, one of each group
	}{
		{name: "text that is not a database", bytes: []byte(strings.Repeat("this is not a database\n", 400)), want: []string{"not a SQLite database", "not a database"}},
		{name: "a database cut short", bytes: whole[:len(whole)/2], want: []string{"damaged", "malformed", "corrupt"}},
		{name: "a database from a newer toolwarden", path: newer, want: []string{"newer", "999"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if tc.bytes != nil {
				path = filepath.Join(t.TempDir(), "store.db")
				if err := os.WriteFile(path, tc.bytes, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := folderFiles(t, filepath.Dir(path))
			f := newStoreFleet(t, "sqlite:"+path)
			s := f.launch(t, 0)
			code := s.waitExit(t, 60*time.Second)
			log := s.log.String()
			if code == 0 || strings.Contains(log, "listening on") {
				t.Fatalf("serve started on %s (exit %d):\n%s", tc.name, code, log)
			}
			mustContain(t, log, path)
			if !containsAny(log, tc.want) {
				t.Errorf("serve's error does not say what is wrong (want one of %q):\n%s", tc.want, log)
			}
			sameFiles(t, before, folderFiles(t, filepath.Dir(path)))
		})
	}
}

// A SQLite store another process holds locked (an exclusive transaction)
// stops serve at start with an error that says the database is locked,
// changes none of its bytes, and once the lock is gone serve starts on it
// with what it held.
func TestALockedSQLiteStoreStopsServeWithAClearErrorAndLosesNothing(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "store.db")
	f := newStoreFleet(t, "sqlite:"+path)
	first := f.start(t)
	ask := answers("always")
	if out, isErr := storeClient(t, first, legacyEra, "alice-token", ask).call(t, "gate__echo", map[string]any{"message": "before-lock"}); isErr || ask.count() != 1 {
		t.Fatalf("alice's always: %q (error %v, asked %d)", out, isErr, ask.count())
	}
	first.stop(t)

	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatalf("locking %s: %v", path, err)
	}
	before := fileDigest(t, path)
	locked := f.launch(t, 0)
	code := locked.waitExit(t, 90*time.Second)
	log := locked.log.String()
	if code == 0 || strings.Contains(log, "listening on") {
		t.Fatalf("serve started on a locked store (exit %d):\n%s", code, log)
	}
	mustContain(t, log, path)
	if !strings.Contains(strings.ToLower(log), "locked") {
		t.Errorf("serve's error does not say the store is locked:\n%s", log)
	}
	if after := fileDigest(t, path); after != before {
		t.Errorf("the locked store's bytes changed")
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	db.Close()

	again := f.start(t)
	askAgain := answers("deny")
	if out, isErr := storeClient(t, again, modernEra, "alice-token", askAgain).call(t, "gate__echo", map[string]any{"message": "after-lock"}); isErr || askAgain.count() != 0 {
		t.Fatalf("alice's grant after the lock was released: %q (error %v, asked %d)", out, isErr, askAgain.count())
	}
}

// makeSQLiteStore makes a SQLite store at path as serve makes it (its
// schema migrated), by starting serve on it and stopping it.
func makeSQLiteStore(t *testing.T, path string) {
	t.Helper()
	f := newStoreFleet(t, "sqlite:"+path)
	f.start(t).stop(t)
}

// execSQLite runs one statement on the SQLite file at path.
func execSQLite(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatalf("%s on %s: %v", stmt, path, err)
	}
}

func fileDigest(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// folderFiles is every file of dir with the digest of its bytes.
func folderFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range ents {
		files[filepath.Join(dir, e.Name())] = fileDigest(t, filepath.Join(dir, e.Name()))
	}
	return files
}

// sameFiles fails unless every file of before is in after with the same
// bytes. A file SQLite makes beside a database it opens (an empty -wal,
// the -shm index) is allowed, and logged; any other new file is not.
func sameFiles(t testing.TB, before, after map[string]string) {
	t.Helper()
	for p, d := range before {
		if after[p] != d {
			t.Errorf("%s changed or went away", p)
		}
	}
	empty := fmt.Sprintf("%x", sha256.Sum256(nil))
	for p, d := range after {
		if _, ok := before[p]; ok {
			continue
		}
		if strings.HasSuffix(p, "-shm") || (strings.HasSuffix(p, "-wal") && d == empty) {
			t.Logf("left beside the store: %s", filepath.Base(p))
			continue
		}
		t.Errorf("a new file beside the store: %s", p)
	}
}

func containsAny(s string, subs []string) bool {
	low := strings.ToLower(s)
	for _, sub := range subs {
		if strings.Contains(low, strings.ToLower(sub)) {
			return true
		}
	}
	return false
}
