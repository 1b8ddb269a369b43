// Package pgtest runs a throwaway PostgreSQL server for tests: the store's
// Postgres engine is tested against the real server a team runs (Debian's
// postgresql, installed by scripts/setup.sh), never a mock.
//
// Most tests share one cluster per test binary and get a fresh database
// each, which keeps CI lean:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		db := pgtest.Shared(t) // CREATE DATABASE; dropped when the test ends
//		s, err := store.Open(ctx, db.URL, store.Options{})
//		...
//	}
//
// A test that stops or kills the server (faults, recovery) starts its own:
//
//	c := pgtest.Start(t) // initdb + postgres; stopped when the test ends
//	url := c.URL(c.CreateDB(t))
//	... c.Stop() ... c.Start() ... c.Kill() ... c.Start() ...
//
// The server runs as the unprivileged "postgres" user when the test runs as
// root (postgres refuses to run as root), in a temporary directory that user
// owns, listening on 127.0.0.1 on a free port and on a unix socket in that
// directory, with fsync off (a test's data need not survive a power cut;
// commits are still written to the kernel before they return, so Kill, a
// process crash, loses nothing committed, as on a production server).
// Connections over TCP authenticate with a password generated per cluster
// (scram-sha-256), so URLs carry a password as in production (errors must
// redact it) and no other local user can connect; the unix socket, in a
// directory only the server's user and root can enter, trusts its clients
// (the helpers here use it for CREATE DATABASE).
//
// Every cluster is stopped by t.Cleanup (Start) or by Main (Shared); the
// server is also killed by the kernel if the test binary dies first
// (a parent-death signal), so no postgres process outlives a test run.
// When the binaries are absent the test is skipped, or fails under
// TOOLWARDEN_REQUIRE_TOOLCHAINS=1 (testkit.Need).
package pgtest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// Superuser is the role initdb creates and every URL connects as.
const Superuser = "postgres"

// readyTimeout bounds initdb, a start (including crash recovery after
// Kill) and a stop; generous because CI's two cores are shared.
const readyTimeout = 60 * time.Second

// Cluster is one PostgreSQL server (a data directory and, while running,
// its postmaster). Its methods are safe for concurrent use.
type Cluster struct {
	bin      string // the directory holding initdb, postgres, psql
	dir      string // owned by the server's user: data/, the socket, pwfile
	port     int
	password string
	cred     *syscall.Credential // nil when the test does not run as root

	mu   sync.Mutex
	proc *exec.Cmd       // the running postmaster, nil when stopped
	done chan struct{}   // closed when proc has been reaped
	log  *testkit.Buffer // the server's stderr, every run appended
	dbs  int             // databases made by CreateDB, for unique names
}

// Start runs a cluster of its own until the test ends. It skips the test
// when PostgreSQL is not installed (fails it under
// TOOLWARDEN_REQUIRE_TOOLCHAINS=1) and fails it when the server does not
// come up.
func Start(t testing.TB) *Cluster {
	t.Helper()
	bin, err := BinDir()
	testkit.Need(t, "PostgreSQL (initdb, postgres)", err)
	c, err := newCluster(bin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	if err := c.firstStart(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return c
}

// firstStart starts a new cluster, moving it to another free port when the
// one chosen was taken between choosing and binding it.
func (c *Cluster) firstStart() error {
	for attempt := 1; ; attempt++ {
		err := c.Start()
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "could not bind") {
			return err
		}
		if c.port, err = freePort(); err != nil {
			return err
		}
	}
}

// BinDir is the directory holding Debian's newest PostgreSQL server
// binaries (/usr/lib/postgresql/<version>/bin), else the directory of the
// initdb on the PATH; an error says what to install.
func BinDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if hasServer(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil && hasServer(filepath.Dir(p)) {
		return filepath.Dir(p), nil
	}
	return "", errors.New("no PostgreSQL server found (initdb, postgres and psql in /usr/lib/postgresql/*/bin or on the PATH): install Debian's postgresql package")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres", "psql"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

// newCluster makes the directory and runs initdb; the server is not
// started.
func newCluster(bin string) (*Cluster, error) {
	cred, err := serverCredential()
	if err != nil {
		return nil, err
	}
	// Not t.TempDir nor $TMPDIR: their parents may be closed to the
	// server's user, and the socket's path must stay under 107 bytes.
	dir, err := os.MkdirTemp(tempRoot(), "pgtest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin, dir: dir, cred: cred, log: &testkit.Buffer{}, password: randomHex(16)}
	if err := c.initdb(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if c.port, err = freePort(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return c, nil
}

// tempRoot is /tmp, which every user may enter, when there is one.
func tempRoot() string {
	if st, err := os.Stat("/tmp"); err == nil && st.IsDir() {
		return "/tmp"
	}
	return os.TempDir()
}

// serverCredential is the unprivileged user to run the server as when the
// test runs as root, nil otherwise (the server then runs as the test's
// own user).
func serverCredential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(Superuser)
	if err != nil {
		return nil, fmt.Errorf("running as root, the server needs the unprivileged user %q (Debian's postgresql package creates it): %w", Superuser, err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func (c *Cluster) initdb() error {
	pwfile := filepath.Join(c.dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(c.password+"\n"), 0o600); err != nil {
		return err
	}
	if err := c.chown(c.dir, pwfile); err != nil {
		return err
	}
	cmd := c.command("initdb", "-D", c.dataDir(), "-U", Superuser, "--pwfile", pwfile,
		"--auth-local=trust", "--auth-host=scram-sha-256",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	out, err := cmd.CombinedOutput()
	_ = os.Remove(pwfile)
	if err != nil {
		return fmt.Errorf("initdb in %s: %v\n%s", c.dataDir(), err, out)
	}
	return nil
}

func (c *Cluster) chown(paths ...string) error {
	if c.cred == nil {
		return nil
	}
	for _, p := range paths {
		if err := os.Chown(p, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return fmt.Errorf("giving %s to the server's user: %w", p, err)
		}
	}
	return nil
}

// command runs one of the cluster's binaries as the server's user, in its
// directory, with an environment of our own (a developer's PG* variables
// must not redirect it).
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, name), args...)
	cmd.Dir = c.dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC"}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: c.cred,
		Setpgid:    true, // a terminal's Ctrl-C reaches the test binary only; its death ends the server
		Pdeathsig:  syscall.SIGKILL,
	}
	return cmd
}

func (c *Cluster) dataDir() string { return filepath.Join(c.dir, "data") }

// URL is a postgres:// URL for database db over TCP, with the cluster's
// password, as a store would be given it.
func (c *Cluster) URL(db string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(Superuser, c.password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port)),
		Path:     "/" + db,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Port is the TCP port on 127.0.0.1; it stays the same across Stop/Start.
func (c *Cluster) Port() int { return c.port }

// Password is the superuser's password, which URL carries.
func (c *Cluster) Password() string { return c.password }

// Log is everything the server has written to its stderr, every run.
func (c *Cluster) Log() string { return c.log.String() }

// Start starts the server on the cluster's data directory and port and
// waits until it accepts connections. After Stop it finds the data as
// left; after Kill it runs crash recovery first. Starting a running
// cluster is an error.
func (c *Cluster) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != nil {
		return errors.New("pgtest: the cluster is already running")
	}
	cmd := c.command("postgres", "-D", c.dataDir(),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "port="+strconv.Itoa(c.port),
		"-c", "unix_socket_directories="+c.dir,
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB",
		"-c", "log_min_messages=warning", "-c", "log_connections=off")
	from := len(c.log.String())
	cmd.Stdout, cmd.Stderr = c.log, c.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c.proc, c.done = cmd, done
	if err := c.waitReady(done); err != nil {
		c.killLocked()
		return fmt.Errorf("pgtest: postgres on port %d did not become ready: %v\nits log:\n%s", c.port, err, c.log.String()[from:])
	}
	return nil
}

// waitReady polls pg_isready over TCP (the way clients will come) until
// the server accepts connections, it exits, or readyTimeout passes.
func (c *Cluster) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	for {
		probe := exec.Command(filepath.Join(c.bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(c.port), "-U", Superuser, "-d", "postgres")
		probe.Env = []string{"PATH=/usr/bin:/bin"}
		if probe.Run() == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("the server exited")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not ready after %s", readyTimeout)
		}
	}
}

// Stop shuts the server down cleanly (a fast shutdown: open connections
// are ended, committed data is kept) and waits for every process of it
// to exit. Stopping a stopped cluster does nothing.
func (c *Cluster) Stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return nil
	}
	_ = c.proc.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done: // the postmaster exits only after all its backends have
		c.proc = nil
		return nil
	case <-time.After(readyTimeout):
		c.killLocked()
		return fmt.Errorf("pgtest: postgres on port %d did not stop within %s; killed", c.port, readyTimeout)
	}
}

// Kill ends the server and all its backends with SIGKILL, as a crash
// would: no shutdown checkpoint, open transactions lost. Start afterwards
// recovers from the write-ahead log.
func (c *Cluster) Kill() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return errors.New("pgtest: the cluster is not running")
	}
	c.killLocked()
	return nil
}

// killLocked kills the postmaster and every backend and waits until all
// are gone. Backends call setsid, so a process-group kill would miss them:
// the postmaster is frozen first (it forks no more), its children are read
// from /proc, and each is killed and waited for.
func (c *Cluster) killLocked() {
	pid := c.proc.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGSTOP)
	children := childrenOf(pid)
	for _, child := range children {
		_ = syscall.Kill(child, syscall.SIGKILL)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	<-c.done
	c.proc = nil
	waitGone(children)
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, ok := procStat(p); ok && ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// procStat reads a process's parent and state from /proc/<pid>/stat.
func procStat(pid int) (ppid int, state byte, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
	fields := strings.Fields(rest)
	if len(fields) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return ppid, fields[0][0], err == nil
}

// alive reports whether pid is a process that still runs: a zombie left
// for an init that does not reap (a container's) counts as gone.
func alive(pid int) bool {
	_, state, ok := procStat(pid)
	return ok && state != 'Z' && state != 'X'
}

// waitGone waits until none of pids is alive, at most readyTimeout.
func waitGone(pids []int) {
	deadline := time.Now().Add(readyTimeout)
	for _, p := range pids {
		for alive(p) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// Running reports whether the server is up (started and not stopped or
// killed).
func (c *Cluster) Running() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proc != nil
}

// Pid is the postmaster's process id, 0 when the cluster is stopped.
func (c *Cluster) Pid() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil {
		return 0
	}
	return c.proc.Process.Pid
}

// Remove stops the server and deletes the cluster's directory. Start's
// cleanup and Main call it; a test need not.
func (c *Cluster) Remove() error {
	stopErr := c.Stop()
	if err := os.RemoveAll(c.dir); err != nil {
		return fmt.Errorf("pgtest: removing %s: %w", c.dir, err)
	}
	return stopErr
}

// CreateDB makes a new, empty database and returns its name; it is
// dropped when the test ends (if the server is up then).
func (c *Cluster) CreateDB(t testing.TB) string {
	t.Helper()
	c.mu.Lock()
	c.dbs++
	name := fmt.Sprintf("tw_%d_%s", c.dbs, randomHex(4))
	c.mu.Unlock()
	if _, err := c.Query("postgres", "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if !c.Running() {
			return
		}
		if _, err := c.Query("postgres", "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("pgtest: %v", err)
		}
	})
	return name
}

// Query runs sql in database db with psql over the cluster's unix socket
// (the same SQL a test would send, without a driver in this package) and
// returns the rows, one a line, columns separated by "|".
func (c *Cluster) Query(db, sql string) (string, error) {
	cmd := exec.Command(filepath.Join(c.bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-h", c.dir, "-p", strconv.Itoa(c.port), "-U", Superuser, "-d", db, "-c", sql)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("psql on port %d, database %s, %q: %v: %s", c.port, db, sql, err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimRight(string(out), "\n"), nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b)
}
