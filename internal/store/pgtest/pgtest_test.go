package pgtest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// psqlURL runs sql through the cluster's TCP URL (with its password), the
// way a store connects, rather than the trusted unix socket Query uses.
func psqlURL(t *testing.T, c *Cluster, url, sql string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(c.bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", url, "-c", sql)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func mustQuery(t *testing.T, c *Cluster, db, sql string) string {
	t.Helper()
	out, err := c.Query(db, sql)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAClusterAnswersOverItsURLAndRefusesAWrongPassword(t *testing.T) {
	c := Start(t)
	db := c.CreateDB(t)
	out, err := psqlURL(t, c, c.URL(db), "SELECT current_database(), current_user")
	if err != nil || out != db+"|"+Superuser {
		t.Fatalf("over the URL: %q, %v; want %q", out, err, db+"|"+Superuser)
	}
	wrong := strings.Replace(c.URL(db), c.Password(), "not-the-password", 1)
	if out, err := psqlURL(t, c, wrong, "SELECT 1"); err == nil || !strings.Contains(out, "password authentication failed") {
		t.Fatalf("a wrong password was not refused: %q, %v", out, err)
	}
	if owner := fileOwner(t, c.dataDir()); os.Geteuid() == 0 && owner == 0 {
		t.Fatalf("the data directory belongs to root: the server must run as an unprivileged user")
	}
}

func fileOwner(t *testing.T, path string) int {
	t.Helper()
	out, err := exec.Command("stat", "-c", "%u", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return uid
}

func TestCommittedDataSurvivesStopAndStart(t *testing.T) {
	c := Start(t)
	db := c.CreateDB(t)
	url := c.URL(db)
	mustQuery(t, c, db, "CREATE TABLE kept (v TEXT); INSERT INTO kept VALUES ('before the stop')")
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if c.Running() || listening(c.Port()) {
		t.Fatal("the server still runs or listens after Stop")
	}
	if _, err := psqlURL(t, c, url, "SELECT 1"); err == nil {
		t.Fatal("a query succeeded while the server was stopped")
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if out, err := psqlURL(t, c, url, "SELECT v FROM kept"); err != nil || out != "before the stop" {
		t.Fatalf("after Start, the same URL reads %q, %v", out, err)
	}
}

func TestKillEndsEveryBackendAndStartRecoversCommittedData(t *testing.T) {
	c := Start(t)
	db := c.CreateDB(t)
	mustQuery(t, c, db, "CREATE TABLE kept (v TEXT); INSERT INTO kept VALUES ('committed')")
	// A backend busy in a query when the server dies, as a store's would be.
	busy := exec.Command(filepath.Join(c.bin, "psql"), "-X", c.URL(db), "-c", "SELECT pg_sleep(60)")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Process.Kill(); _ = busy.Wait() }()
	waitFor(t, "the busy backend", func() bool {
		out, _ := c.Query("postgres", "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%'")
		return out == "1"
	})
	postmaster := c.Pid()
	backends := childrenOf(postmaster)
	if len(backends) < 2 {
		t.Fatalf("expected the postmaster's helpers and a backend, found %v", backends)
	}
	if err := c.Kill(); err != nil {
		t.Fatal(err)
	}
	for _, p := range append(backends, postmaster) {
		if alive(p) {
			t.Fatalf("process %d of the killed server is still alive", p)
		}
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if out := mustQuery(t, c, db, "SELECT v FROM kept"); out != "committed" {
		t.Fatalf("after crash recovery the table reads %q", out)
	}
	if !strings.Contains(c.Log(), "not properly shut down") {
		t.Fatalf("the restart after Kill ran no crash recovery; log:\n%s", c.Log())
	}
}

func TestAClusterLeavesNoProcessOrDirectoryWhenItsTestEnds(t *testing.T) {
	var pids []int
	var dir string
	t.Run("a test that starts a cluster", func(t *testing.T) {
		c := Start(t)
		dir = c.dir
		pids = append(childrenOf(c.Pid()), c.Pid())
	})
	for _, p := range pids {
		if alive(p) {
			t.Fatalf("process %d outlived its test", p)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the cluster's directory %s outlived its test: %v", dir, err)
	}
}

func TestSharedGivesEachTestItsOwnDatabaseAndDropsIt(t *testing.T) {
	var first *DB
	t.Run("one test", func(t *testing.T) {
		first = Shared(t)
		if _, err := psqlURL(t, first.Cluster, first.URL, "CREATE TABLE mine (v INT)"); err != nil {
			t.Fatal(err)
		}
		second := Shared(t)
		if second.Name == first.Name || second.Cluster != first.Cluster {
			t.Fatalf("two Shared calls: %q and %q on clusters %p and %p; want two databases on one cluster", first.Name, second.Name, first.Cluster, second.Cluster)
		}
		if out, err := psqlURL(t, second.Cluster, second.URL, "SELECT count(*) FROM pg_tables WHERE tablename = 'mine'"); err != nil || out != "0" {
			t.Fatalf("the second database sees the first's table: %q, %v", out, err)
		}
	})
	out := mustQuery(t, first.Cluster, "postgres", "SELECT count(*) FROM pg_database WHERE datname = '"+first.Name+"'")
	if out != "0" {
		t.Fatalf("database %s outlived its test", first.Name)
	}
}

func listening(port int) bool {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
	if err == nil {
		conn.Close()
	}
	return err == nil
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A TMPDIR the server's user cannot enter (a root-only directory when
// tests run as root) must not stop the cluster: it lives under /tmp.
func TestAClusterStartsWhenTMPDIRIsClosedToTheServersUser(t *testing.T) {
	closed := t.TempDir()
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", closed)
	c := Start(t)
	if out := mustQuery(t, c, "postgres", "SELECT 1"); out != "1" {
		t.Fatalf("SELECT 1 read %q", out)
	}
}
