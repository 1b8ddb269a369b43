package inbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// testDir returns a fresh private rendezvous directory.
func testDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rv")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func testAsk() Ask {
	return Ask{
		Origin: "wrap", Session: "s1", Server: "fs", Tool: "write_file", App: "fs",
		Reasons:   []string{"destructive: the tool may change things"},
		Arguments: `{"path": "/tmp/x", "content": "hi"}`,
		Digest:    strings.Repeat("ab", 32),
		Options: []Option{
			{ID: "allow_once", Title: "Allow once"},
			{ID: "allow_session", Title: "Allow for this session"},
			{ID: "deny", Title: "Deny"},
		},
		Expires: time.Now().Add(time.Hour),
	}
}

func post(t *testing.T, dir string, a Ask) *Pending {
	t.Helper()
	p, err := Post(dir, a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func TestDirUsesTheEnvironmentAndCreatesItPrivate(t *testing.T) {
	want := filepath.Join(t.TempDir(), "rt")
	t.Setenv(EnvRuntimeDir, want)
	got, err := Dir()
	if err != nil || got != want {
		t.Fatalf("Dir() = %q, %v; want %q", got, err, want)
	}
	for _, d := range []string{want, filepath.Join(want, "asks"), filepath.Join(want, "answers"), filepath.Join(want, "links")} {
		fi, err := os.Stat(d)
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a 0700 directory", d, fi, err)
		}
	}
}

func TestUnsafeDirectoriesAreRefused(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T) string
		want  string
	}{
		{"a group-readable directory", func(t *testing.T) string {
			d := filepath.Join(t.TempDir(), "rv")
			os.Mkdir(d, 0o700)
			os.Chmod(d, 0o750)
			return d
		}, "chmod 700"},
		{"a world-writable asks directory", func(t *testing.T) string {
			d := testDir(t)
			os.Mkdir(filepath.Join(d, "asks"), 0o700)
			os.Chmod(filepath.Join(d, "asks"), 0o777)
			return d
		}, "chmod 700"},
		{"a symlink to a private directory", func(t *testing.T) string {
			real := testDir(t)
			link := filepath.Join(t.TempDir(), "link")
			os.Symlink(real, link)
			return link
		}, "symlink"},
		{"a symlinked answers directory", func(t *testing.T) string {
			d := testDir(t)
			other := testDir(t)
			os.Symlink(other, filepath.Join(d, "answers"))
			return d
		}, "symlink"},
		{"a file", func(t *testing.T) string {
			f := filepath.Join(t.TempDir(), "f")
			os.WriteFile(f, nil, 0o600)
			return f
		}, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.setup(t)
			t.Setenv(EnvRuntimeDir, d)
			if _, err := Dir(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Dir() error = %v; want one saying %q", err, tt.want)
			}
			if _, err := Post(d, testAsk()); err == nil {
				t.Error("Post accepted the directory")
			}
			if _, err := List(d); err == nil {
				t.Error("List accepted the directory")
			}
		})
	}
}

func TestPostWritesAPrivateFileThatListShows(t *testing.T) {
	dir := testDir(t)
	p := post(t, dir, testAsk())
	if !validID(p.ID()) {
		t.Fatalf("minted id %q", p.ID())
	}
	fi, err := os.Stat(askPath(dir, p.ID()))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ask file: %v, %v; want 0600", fi, err)
	}
	asks, err := List(dir)
	if err != nil || len(asks) != 1 {
		t.Fatalf("List = %v, %v", asks, err)
	}
	a := asks[0]
	if a.ID != p.ID() || a.PID != os.Getpid() || a.Arguments != testAsk().Arguments || a.Created.IsZero() || len(a.Options) != 3 {
		t.Errorf("listed %+v", a)
	}
}

func TestPostRefusesAnAskThatCannotBeAnswered(t *testing.T) {
	dir := testDir(t)
	tests := []struct {
		name string
		edit func(a *Ask)
	}{
		{"no options", func(a *Ask) { a.Options = nil }},
		{"a repeated option", func(a *Ask) { a.Options = append(a.Options, a.Options[0]) }},
		{"no expiry", func(a *Ask) { a.Expires = time.Time{} }},
		{"no tool", func(a *Ask) { a.Tool = "" }},
		{"arguments larger than a file may be", func(a *Ask) { a.Arguments = strings.Repeat("x", maxFile) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := testAsk()
			tt.edit(&a)
			if p, err := Post(dir, a); err == nil {
				p.Close()
				t.Fatal("Post accepted it")
			}
		})
	}
}

func TestWaitReturnsTheAnswer(t *testing.T) {
	dir := testDir(t)
	p := post(t, dir, testAsk())
	go func() {
		if err := Respond(dir, p.ID(), "allow_session", "inbox"); err != nil {
			t.Error(err)
		}
	}()
	ans, err := p.Wait(context.Background())
	if err != nil || ans.Option != "allow_session" || ans.Channel != "inbox" || ans.AskID != p.ID() {
		t.Fatalf("Wait = %+v, %v", ans, err)
	}
}

func TestTheFirstOfConcurrentAnswersWins(t *testing.T) {
	dir := testDir(t)
	p := post(t, dir, testAsk())
	options := []string{"allow_once", "allow_session", "deny"}
	const n = 30
	var wg sync.WaitGroup
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = Respond(dir, p.ID(), options[i%3], "inbox")
		}()
	}
	close(start)
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won >= 0:
			t.Fatalf("answers %d and %d both won", won, i)
		case err == nil:
			won = i
		case !errors.Is(err, ErrAnswered):
			t.Errorf("answer %d: %v; want ErrAnswered", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no answer won")
	}
	ans, err := p.Wait(context.Background())
	if err != nil || ans.Option != options[won%3] {
		t.Fatalf("Wait = %+v, %v; want the winner's %q", ans, err, options[won%3])
	}
}

func TestRespondRefuses(t *testing.T) {
	dir := testDir(t)
	dead := deadPID(t)
	tests := []struct {
		name   string
		id     func() string
		option string
		want   error
	}{
		{"an option the ask does not offer", func() string { return post(t, dir, testAsk()).ID() }, "always", ErrNotOffered},
		{"an ask never posted", func() string { return newID() }, "allow_once", ErrUnknownAsk},
		{"a withdrawn ask", func() string {
			p := post(t, dir, testAsk())
			p.Close()
			return p.ID()
		}, "allow_once", ErrUnknownAsk},
		{"an expired ask", func() string {
			a := testAsk()
			a.Expires = time.Now().Add(-time.Second)
			return post(t, dir, a).ID()
		}, "allow_once", ErrExpired},
		{"an ask whose process is gone", func() string {
			a := testAsk()
			a.PID = dead
			return post(t, dir, a).ID()
		}, "allow_once", ErrUnknownAsk},
		{"a second answer", func() string {
			p := post(t, dir, testAsk())
			if err := Respond(dir, p.ID(), "deny", "inbox"); err != nil {
				t.Fatal(err)
			}
			return p.ID()
		}, "allow_once", ErrAnswered},
		{"a path for an id", func() string { return "../asks/" + newID() }, "allow_once", errBadAskID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := Respond(dir, tt.id(), tt.option, "inbox"); !errors.Is(err, tt.want) {
				t.Errorf("Respond = %v; want %v", err, tt.want)
			}
		})
	}
}

func TestWaitEnds(t *testing.T) {
	dir := testDir(t)
	t.Run("when the ask expires", func(t *testing.T) {
		a := testAsk()
		a.Expires = time.Now().Add(50 * time.Millisecond)
		p := post(t, dir, a)
		if _, err := p.Wait(context.Background()); !errors.Is(err, ErrExpired) {
			t.Errorf("Wait = %v; want ErrExpired", err)
		}
	})
	t.Run("when the context ends", func(t *testing.T) {
		p := post(t, dir, testAsk())
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := p.Wait(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Wait = %v; want context.Canceled", err)
		}
	})
	t.Run("when the asker withdraws the ask", func(t *testing.T) {
		p := post(t, dir, testAsk())
		done := make(chan error)
		go func() { _, err := p.Wait(context.Background()); done <- err }()
		p.Close()
		if err := <-done; !errors.Is(err, ErrWithdrawn) {
			t.Errorf("Wait = %v; want ErrWithdrawn", err)
		}
		if err := p.Close(); err != nil {
			t.Errorf("a second Close: %v", err)
		}
		if _, err := os.Stat(askPath(dir, p.ID())); !os.IsNotExist(err) {
			t.Errorf("the ask file is still there: %v", err)
		}
	})
	t.Run("with an error for an answer the ask did not offer", func(t *testing.T) {
		p := post(t, dir, testAsk())
		// Written by hand, as a process bypassing Respond would.
		os.WriteFile(answerPath(dir, p.ID()), []byte(`{"ask_id":"`+p.ID()+`","option":"always","channel":"x","at":"2026-01-01T00:00:00Z"}`), 0o600)
		if _, err := p.Wait(context.Background()); !errors.Is(err, ErrNotOffered) {
			t.Errorf("Wait = %v; want ErrNotOffered", err)
		}
	})
	t.Run("with an error for an answer to another ask", func(t *testing.T) {
		p := post(t, dir, testAsk())
		os.WriteFile(answerPath(dir, p.ID()), []byte(`{"ask_id":"`+newID()+`","option":"deny","channel":"x","at":"2026-01-01T00:00:00Z"}`), 0o600)
		if _, err := p.Wait(context.Background()); err == nil {
			t.Error("Wait accepted it")
		}
	})
}

// deadPID returns the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

func TestListSkipsWhatItCannotUse(t *testing.T) {
	dir := testDir(t)
	good := post(t, dir, testAsk())
	asks := filepath.Join(dir, "asks")
	id := func() string { return newID() }
	write := func(name, body string) { os.WriteFile(filepath.Join(asks, name), []byte(body), 0o600) }

	write(id()+".json", "{not json")
	write(id()+".json", `{"id":"x"}`)
	write(id()+".json", strings.Repeat(" ", maxFile+1))
	write("notes.txt", "hello")
	other := id()
	write(other+".json", `{"id":"`+id()+`","tool":"t","options":[{"id":"deny"}],"expires":"2100-01-01T00:00:00Z","pid":1}`)
	unknown := id()
	write(unknown+".json", `{"id":"`+unknown+`","tool":"t","options":[{"id":"deny"}],"expires":"2100-01-01T00:00:00Z","pid":1,"extra":true}`)
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	os.WriteFile(target, []byte("{}"), 0o600)
	os.Symlink(target, filepath.Join(asks, id()+".json"))
	os.Mkdir(filepath.Join(asks, id()+".json"), 0o700)
	write(".tmp-123", "half written")

	got, skipped, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != good.ID() {
		t.Errorf("Scan listed %v; want only %s", got, good.ID())
	}
	if len(skipped) != 8 {
		t.Errorf("Scan skipped %d files; want 8: %v", len(skipped), skipped)
	}
	for _, s := range skipped {
		if s.Why == "" || s.String() == "" {
			t.Errorf("skip without a reason: %+v", s)
		}
	}
}

func TestListLeavesOutAndCleansUpAsksNobodyWaitsFor(t *testing.T) {
	dir := testDir(t)
	a := testAsk()
	a.PID = deadPID(t)
	gone := post(t, dir, a)
	b := testAsk()
	b.Expires = time.Now().Add(-time.Second)
	expired := post(t, dir, b)
	c := testAsk()
	c.Expires = time.Now().Add(-2 * staleAfter)
	stale := post(t, dir, c)
	live := post(t, dir, testAsk())

	got, err := List(dir)
	if err != nil || len(got) != 1 || got[0].ID != live.ID() {
		t.Fatalf("List = %v, %v; want only the live ask", got, err)
	}
	for _, tt := range []struct {
		p    *Pending
		kept bool
	}{{gone, false}, {expired, true}, {stale, false}} {
		_, err := os.Stat(askPath(dir, tt.p.ID()))
		if kept := err == nil; kept != tt.kept {
			t.Errorf("ask %s kept = %v; want %v", tt.p.ID(), kept, tt.kept)
		}
	}
}

func TestListSortsOldestFirst(t *testing.T) {
	dir := testDir(t)
	a, b := testAsk(), testAsk()
	a.Created = time.Now().Add(-time.Minute)
	b.Created = time.Now().Add(-2 * time.Minute)
	pa, pb := post(t, dir, a), post(t, dir, b)
	got, _ := List(dir)
	if len(got) != 2 || got[0].ID != pb.ID() || got[1].ID != pa.ID() {
		t.Errorf("List order %v", got)
	}
}

func TestOrphanAnswersAreSweptWhenOld(t *testing.T) {
	dir := testDir(t)
	id := newID()
	p := answerPath(dir, id)
	Post(dir, testAsk()) // creates the directories
	os.WriteFile(p, []byte("{}"), 0o600)
	List(dir)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("a fresh orphan answer was swept: %v", err)
	}
	old := time.Now().Add(-2 * staleAfter)
	os.Chtimes(p, old, old)
	List(dir)
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("an old orphan answer stayed: %v", err)
	}
}

func TestWatchReportsPostsAnswersAndWithdrawals(t *testing.T) {
	dir := testDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := Watch(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	drain := func() {
		for {
			select {
			case <-ch:
			default:
				return
			}
		}
	}
	p := post(t, dir, testAsk())
	<-ch
	drain()
	Respond(dir, p.ID(), "deny", "inbox")
	<-ch
	drain()
	p.Close()
	<-ch
	cancel()
	for range ch {
	}
}

func TestWatchRefusesAnUnsafeDirectory(t *testing.T) {
	d := testDir(t)
	os.Chmod(d, 0o755)
	if _, err := Watch(context.Background(), d); err == nil {
		t.Error("Watch accepted a world-readable directory")
	}
}

func TestGetSaysWhyAnAskIsNotPending(t *testing.T) {
	dir := testDir(t)
	p := post(t, dir, testAsk())
	if a, err := Get(dir, p.ID()); err != nil || a.ID != p.ID() {
		t.Fatalf("Get = %+v, %v", a, err)
	}
	if _, err := Get(dir, "nope"); !errors.Is(err, errBadAskID) {
		t.Errorf("Get(nope) = %v", err)
	}
	os.WriteFile(askPath(dir, p.ID()), []byte("garbage"), 0o600)
	if _, err := Get(dir, p.ID()); err == nil || errors.Is(err, ErrUnknownAsk) {
		t.Errorf("Get(garbage) = %v; want a parse error", err)
	}
}

// Without fsnotify (no inotify, or its limits reached) answers and changes
// still arrive, through the poll.
func TestThePollDeliversWithoutFsnotify(t *testing.T) {
	saved := newWatcher
	newWatcher = func() (*fsnotify.Watcher, error) { return nil, errors.New("inotify unavailable") }
	defer func() { newWatcher = saved }()

	dir := testDir(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := Watch(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	p := post(t, dir, testAsk())
	<-ch
	go Respond(dir, p.ID(), "deny", "inbox")
	if ans, err := p.Wait(context.Background()); err != nil || ans.Option != "deny" {
		t.Fatalf("Wait = %+v, %v", ans, err)
	}
}

func TestAnAnsweredAskIsNoLongerListed(t *testing.T) {
	dir := testDir(t)
	p := post(t, dir, testAsk())
	q := post(t, dir, testAsk())
	if err := Respond(dir, p.ID(), "deny", "inbox"); err != nil {
		t.Fatal(err)
	}
	got, err := List(dir)
	if err != nil || len(got) != 1 || got[0].ID != q.ID() {
		t.Errorf("List = %v, %v; want only the unanswered ask", got, err)
	}
	if ans, err := p.Wait(context.Background()); err != nil || ans.Option != "deny" {
		t.Errorf("Wait after List = %+v, %v", ans, err)
	}
}

// A directory another user made (and could write into later) is refused,
// even with the right mode. Only root can hand a directory to another user,
// so the test needs root (as CI runs).
func TestADirectoryOfAnotherUserIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("making a directory another user's needs root")
	}
	d := testDir(t)
	if err := os.Chown(d, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvRuntimeDir, d)
	if _, err := Dir(); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("Dir() = %v; want a refusal naming the owner", err)
	}
}
