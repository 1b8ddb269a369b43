package pgtest

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// DB is a fresh database on the test binary's shared cluster.
type DB struct {
	Cluster *Cluster
	Name    string
	URL     string // Cluster.URL(Name)
}

// shared is the one cluster a test binary's Shared tests use: started by
// the first Shared call, removed by Main after every test has run.
var shared struct {
	sync.Mutex
	main    bool // Main is running the tests: someone will remove the cluster
	cluster *Cluster
	err     error
}

// Main runs the tests (m.Run) and then removes the shared cluster, if a
// test started it. A package whose tests call Shared must use it:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
func Main(m *testing.M) int {
	shared.Lock()
	shared.main = true
	shared.Unlock()
	code := m.Run()
	shared.Lock()
	defer shared.Unlock()
	if shared.cluster != nil {
		if err := shared.cluster.Remove(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
		shared.cluster = nil
	}
	return code
}

// Shared gives the test a new database on the test binary's one cluster
// (started on first use), dropped when the test ends. Tests must not stop
// or kill that cluster (others use it): a fault test uses Start. It fails
// the test when the package's TestMain does not call Main (the cluster
// would outlive the binary), and skips as Start does when PostgreSQL is
// not installed.
func Shared(t testing.TB) *DB {
	t.Helper()
	c := sharedCluster(t)
	name := c.CreateDB(t)
	return &DB{Cluster: c, Name: name, URL: c.URL(name)}
}

func sharedCluster(t testing.TB) *Cluster {
	t.Helper()
	bin, err := BinDir()
	testkit.Need(t, "PostgreSQL (initdb, postgres)", err)
	shared.Lock()
	defer shared.Unlock()
	if !shared.main {
		t.Fatal("pgtest.Shared needs the package's TestMain to call pgtest.Main, which stops the shared cluster: func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }")
	}
	if shared.cluster == nil && shared.err == nil {
		shared.cluster, shared.err = startShared(bin)
	}
	if shared.err != nil {
		t.Fatalf("pgtest: the shared cluster: %v", shared.err)
	}
	return shared.cluster
}

func startShared(bin string) (*Cluster, error) {
	c, err := newCluster(bin)
	if err != nil {
		return nil, err
	}
	if err := c.firstStart(); err != nil {
		_ = os.RemoveAll(c.dir)
		return nil, err
	}
	return c, nil
}
