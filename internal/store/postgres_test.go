package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/store/pgtest"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

// terminate ends a backend of the database at url, as an administrator
// or a failing network would.
func terminate(t *testing.T, url string, pid int32) {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ok bool
	if err := db.QueryRow("SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d) = %v, %v", pid, ok, err)
	}
}

func TestAWakeUpFiresWhenTheListenersConnectionIsKilledThoughTheNotifyMeanwhileIsLost(t *testing.T) {
	db := pgtest.Shared(t)
	var log testkit.Buffer
	a := openTest(t, db.URL, Options{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	b := openTest(t, db.URL, Options{})
	pid := listening(t, a)
	revision, asks := a.wake(TopicRevision), a.wake(TopicAsks)

	terminate(t, db.URL, pid)
	bumpOnce(t, b) // sent while a's listener is down or reconnecting: not delivered to it

	// Nobody notifies "asks": only the reconnect can wake it.
	if !fired(asks, 10*time.Second) || !fired(revision, 0) {
		t.Fatal("the listener reconnected without waking its waiters, who would miss what changed meanwhile")
	}
	newPID := listening(t, a)
	if newPID == pid {
		t.Fatalf("the listener still reports backend %d, which was terminated", pid)
	}
	// After the reconnect, notifications flow again.
	again := a.wake(TopicRevision)
	bumpOnce(t, b)
	if !fired(again, 10*time.Second) {
		t.Fatal("another replica's commit did not wake this one after the reconnect")
	}
	if got := log.String(); !strings.Contains(got, "reconnects") || strings.Contains(got, db.Cluster.Password()) {
		t.Errorf("listener log should say it reconnects and never show the password:\n%s", got)
	}
}

func TestAnotherReplicasCommitWakesThisOne(t *testing.T) {
	db := pgtest.Shared(t)
	a, b := openTest(t, db.URL, Options{}), openTest(t, db.URL, Options{})
	listening(t, a)
	woken := a.wake(TopicRevision)
	bumpOnce(t, b)
	if !fired(woken, 10*time.Second) {
		t.Fatal("a commit through replica b did not wake replica a")
	}
}

func TestThePostgresPoolIsBounded(t *testing.T) {
	s := openTest(t, pgtest.Shared(t).URL, Options{})
	if got := s.db.Stats().MaxOpenConnections; got != 16 {
		t.Errorf("MaxOpenConnections = %d; want 16", got)
	}
}

// withPassword is u with its password (in the user part) replaced.
func withPassword(t *testing.T, raw, user, password string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}

func TestAPasswordNeverAppearsInAnError(t *testing.T) {
	db := pgtest.Shared(t)
	// A role whose password needs percent-encoding in a URL, so both its
	// forms are looked for.
	const odd = "p@ss w/rd:S3cret%1"
	for _, q := range []string{"CREATE ROLE tw_attacker LOGIN PASSWORD '" + odd + "'", "GRANT ALL ON SCHEMA public TO tw_attacker"} {
		if _, err := db.Cluster.Query(db.Name, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = db.Cluster.Query(db.Name, "DROP OWNED BY tw_attacker")
		_, _ = db.Cluster.Query(db.Name, "DROP ROLE tw_attacker")
	})
	good := withPassword(t, db.URL, "tw_attacker", odd)
	openTest(t, good, Options{}).Close() // the encoded password is right: it connects

	closed := func() int { // a port nothing listens on
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}()
	const wrong = "Wr0ng-Pa55-word"
	cases := map[string]struct{ url, secret string }{
		"wrong password":          {withPassword(t, db.URL, "postgres", wrong), wrong},
		"wrong odd password":      {withPassword(t, db.URL, "tw_attacker", odd+"x"), odd},
		"nothing listening":       {fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/x?connect_timeout=2", wrong, closed), wrong},
		"no such database":        {strings.Replace(db.URL, "/"+db.Name, "/no_such_db", 1), db.Cluster.Password()},
		"password in a parameter": {fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable&password=%s", db.Cluster.Port(), db.Name, wrong), wrong},
		"port that is no number":  {"postgres://postgres:" + wrong + "@127.0.0.1:port/x", wrong},
		"bad percent-escape":      {"postgres://postgres:" + wrong + "%zz@127.0.0.1/x", wrong},
		"unknown engine":          {"mysql://root:" + wrong + "@127.0.0.1/x", wrong},
		"bad option":              {db.URL + "&sslmode=maybe", db.Cluster.Password()},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := Open(ctx, c.url, Options{})
			if err == nil {
				s.Close()
				t.Fatalf("Open succeeded")
			}
			for _, form := range []string{c.secret, url.QueryEscape(c.secret), url.PathEscape(c.secret), (&url.URL{User: url.UserPassword("u", c.secret)}).String()[len("//u:"):]} {
				form = strings.TrimSuffix(form, "@")
				if strings.Contains(err.Error(), form) {
					t.Fatalf("the error shows the password (%q): %v", form, err)
				}
			}
			if !strings.HasPrefix(err.Error(), "store ") {
				t.Errorf("the error does not name the store: %v", err)
			}
		})
	}
}
