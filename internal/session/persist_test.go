package session_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

var (
	hashA = strings.Repeat("a", 64)
	hashB = strings.Repeat("b", 64)
	keyA  = session.ApprovalKey{App: "fs", Server: "fs", Tool: "write_file", Hash: hashA}
	keyB  = session.ApprovalKey{App: "fs", Server: "fs", Tool: "write_file", Hash: hashB}
)

func remembered(p *session.Persistent, k session.ApprovalKey) bool {
	return p.Remembered(k.App, k.Server, k.Connector, k.Tool, k.Hash)
}

func openP(t testing.TB, path string) *session.Persistent {
	t.Helper()
	p, err := session.OpenPersistent(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// grantFile is a valid approvals file granting k, at a fixed time so that
// files for keys of equal length have equal sizes.
func grantFile(k session.ApprovalKey) string {
	return fmt.Sprintf(`{"version": 1, "approvals": [{"app": %q, "server": %q, "tool": %q, "definition_hash": %q, "granted_at": "2026-01-02T03:04:05Z"}]}`+"\n",
		k.App, k.Server, k.Tool, k.Hash)
}

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A revoke made through another Persistent on the same file (as
// `toolwarden approvals revoke` does from its own process) is seen by the
// very next Remembered call, with no wait; so is an add.
func TestRevokeElsewhereIsSeenOnTheVeryNextCall(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approvals.json")
	agent, cli := openP(t, file), openP(t, file)
	for round := 0; round < 20; round++ {
		if err := cli.Add(keyA, time.Now()); err != nil {
			t.Fatal(err)
		}
		if !remembered(agent, keyA) {
			t.Fatalf("round %d: an add elsewhere was not seen by the next call", round)
		}
		if n, err := cli.Revoke(func(session.Grant) bool { return true }); err != nil || n != 1 {
			t.Fatalf("revoke: %d %v", n, err)
		}
		if remembered(agent, keyA) {
			t.Fatalf("round %d: a revoke elsewhere was not seen by the next call", round)
		}
	}
}

// Every way the file can change is seen by the next call, including those a
// modification-time check misses: a same-size rewrite whose mtime is put
// back, a replacement by rename with the old mtime, a deletion. The stamp
// alone (inode, ctime, size, mtime) must see them, and so must the default
// (which also compares bytes of a recently changed file).
func TestEveryChangeToTheFileIsSeenByTheNextCall(t *testing.T) {
	t.Parallel()
	changes := []struct {
		name     string
		unixOnly bool // needs inode and ctime in the stamp
		change   func(t *testing.T, file string)
		want     bool // keyA still granted
		wantB    bool // keyB granted
	}{
		{"a same-size in-place rewrite with the mtime put back", true, func(t *testing.T, file string) {
			fi, _ := os.Stat(file)
			f, err := os.OpenFile(file, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte(grantFile(keyB)), 0); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			if fi2, _ := os.Stat(file); fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
				t.Fatal("the rewrite changed size or mtime; the case tests nothing")
			}
		}, false, true},
		{"a replacement by rename with the same size and mtime", true, func(t *testing.T, file string) {
			fi, _ := os.Stat(file)
			tmp := file + ".new"
			write(t, tmp, grantFile(keyB))
			if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, file); err != nil {
				t.Fatal(err)
			}
		}, false, true},
		{"a deletion", false, func(t *testing.T, file string) {
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
		}, false, false},
		{"an edit by hand that adds a grant", false, func(t *testing.T, file string) {
			write(t, file, strings.Replace(grantFile(keyA), `}]}`, `}, {"app": "fs", "server": "fs", "tool": "write_file", "definition_hash": "`+hashB+`", "granted_at": "2026-01-02T03:04:05Z"}]}`, 1))
		}, true, true},
		{"an edit by hand that empties the list", false, func(t *testing.T, file string) {
			write(t, file, `{"version": 1, "approvals": []}`)
		}, false, false},
	}
	for _, c := range changes {
		for _, stampOnly := range []bool{true, false} {
			name := c.name
			if stampOnly {
				name += " (stat stamp alone)"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				if stampOnly && c.unixOnly && !session.StampComplete {
					t.Skip("this platform's stat has no inode or ctime; the byte comparison covers it")
				}
				file := filepath.Join(t.TempDir(), "approvals.json")
				write(t, file, grantFile(keyA))
				old := time.Now().Add(-time.Hour)
				if err := os.Chtimes(file, old, old); err != nil {
					t.Fatal(err)
				}
				p := openP(t, file)
				if stampOnly {
					session.TrustStampAtOnce(p)
				}
				if !remembered(p, keyA) || remembered(p, keyB) {
					t.Fatal("the grant before the change is not as written")
				}
				c.change(t, file)
				if got := remembered(p, keyA); got != c.want {
					t.Errorf("key A granted = %v after the change, want %v", got, c.want)
				}
				if got := remembered(p, keyB); got != c.wantB {
					t.Errorf("key B granted = %v after the change, want %v", got, c.wantB)
				}
				if err := p.Err(); err != nil {
					t.Errorf("Err after a valid change: %v", err)
				}
			})
		}
	}
}

// A file that cannot be used grants nothing: not the grants read before it
// broke, not the grants it might still hold. The problem is reported by
// Err (and List), the file is not rewritten, and a fixed file is honoured
// again at once.
func TestABrokenFileGrantsNothingAndSaysWhy(t *testing.T) {
	t.Parallel()
	broken := []struct{ name, content, want string }{
		{"invalid JSON", `{"version": 1, "approvals": [`, "unexpected end of JSON input"},
		{"an empty file", "", "empty"},
		{"an empty object", `{}`, `no "version"`},
		{"an unknown version", `{"version": 2, "approvals": []}`, "version 2"},
		{"a version only", `{"version": 1}`, `no "approvals"`},
		{"null approvals", `{"version": 1, "approvals": null}`, `no "approvals"`},
		{"an entry without a server", `{"version": 1, "approvals": [{"app": "fs", "tool": "write_file", "definition_hash": "` + hashA + `", "granted_at": "2026-01-02T03:04:05Z"}]}`, `"server" is missing`},
		{"an entry without a time", `{"version": 1, "approvals": [{"app": "fs", "server": "fs", "tool": "write_file", "definition_hash": "` + hashA + `"}]}`, `"granted_at" is missing`},
		{"a short hash", `{"version": 1, "approvals": [{"app": "fs", "server": "fs", "tool": "write_file", "definition_hash": "abc", "granted_at": "2026-01-02T03:04:05Z"}]}`, "64 lowercase hex"},
		{"an unknown field", strings.Replace(grantFile(keyA), `"app"`, `"scope": "all", "app"`, 1), `unknown field "scope"`},
		{"a valid grant next to a broken one", strings.Replace(grantFile(keyA), `}]}`, `}, {"app": "fs"}]}`, 1), "approvals[1]"},
		{"two JSON values", grantFile(keyA) + grantFile(keyB), "after top-level value"},
		{"a list instead of an object", `[]`, "not a JSON object"},
	}
	for _, c := range broken {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "approvals.json")
			write(t, file, grantFile(keyA))
			p := openP(t, file)
			if !remembered(p, keyA) {
				t.Fatal("valid grant not honoured")
			}
			write(t, file, c.content)
			if remembered(p, keyA) {
				t.Fatal("a broken file kept the grant read before it broke")
			}
			if remembered(p, keyB) {
				t.Fatal("a broken file granted something")
			}
			err := p.Err()
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), file) {
				t.Fatalf("Err = %v, want it to name the file and say %q", err, c.want)
			}
			if _, lerr := p.List(); lerr == nil {
				t.Fatal("List of a broken file reported no error")
			}
			if err := p.Add(keyB, time.Now()); err == nil {
				t.Fatal("Add wrote over a file it could not read")
			}
			if _, err := p.Revoke(func(session.Grant) bool { return true }); err == nil {
				t.Fatal("Revoke wrote over a file it could not read")
			}
			if b, _ := os.ReadFile(file); string(b) != c.content {
				t.Fatalf("the broken file was rewritten:\n%s", b)
			}
			// A fresh process on the broken file is not refused either.
			if q := openP(t, file); q.Err() == nil || remembered(q, keyA) {
				t.Fatalf("a new Persistent on the broken file: err %v", q.Err())
			}
			write(t, file, grantFile(keyB))
			if !remembered(p, keyB) || remembered(p, keyA) || p.Err() != nil {
				t.Fatalf("a fixed file was not honoured at once (err %v)", p.Err())
			}
		})
	}
}

func TestUnknownVersionIsRefusedWithItsOwnError(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approvals.json")
	write(t, file, `{"version": 2, "approvals": [], "future": true}`)
	p := openP(t, file)
	if err := p.Err(); !errors.Is(err, session.ErrUnknownVersion) {
		t.Fatalf("Err = %v, want ErrUnknownVersion", err)
	}
	write(t, file, `{`)
	if err := p.Err(); !errors.Is(err, session.ErrBadApprovalsFile) {
		t.Fatalf("Err = %v, want ErrBadApprovalsFile", err)
	}
}

// Reset clears any file, readable or not, after copying it aside.
func TestResetBacksUpTheFileFirst(t *testing.T) {
	t.Parallel()
	for _, content := range []string{`{"version": 7}`, "garbage", grantFile(keyA)} {
		dir := t.TempDir()
		file := filepath.Join(dir, "approvals.json")
		write(t, file, content)
		p := openP(t, file)
		backup, err := p.Reset(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		if want := file + ".bak-20260102T030405.000000006Z"; backup != want {
			t.Fatalf("backup %q, want %q", backup, want)
		}
		if b, _ := os.ReadFile(backup); string(b) != content {
			t.Fatalf("backup holds %q, want %q", b, content)
		}
		if p.Err() != nil || remembered(p, keyA) {
			t.Fatalf("after reset: err %v", p.Err())
		}
		if grants, err := p.List(); err != nil || len(grants) != 0 {
			t.Fatalf("after reset: %v %v", grants, err)
		}
	}
	// No file: nothing to back up.
	p := openP(t, filepath.Join(t.TempDir(), "approvals.json"))
	if backup, err := p.Reset(time.Now()); err != nil || backup != "" {
		t.Fatalf("reset of a missing file: %q %v", backup, err)
	}
}

// A problem is logged once per change of the file, not once per call, and
// its end is logged too.
func TestProblemsAreLoggedOncePerChange(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approvals.json")
	write(t, file, grantFile(keyA))
	p := openP(t, file)
	var buf testkit.Buffer
	p.SetLogger(slog.New(slog.NewTextHandler(&buf, nil)))
	write(t, file, "garbage")
	for i := 0; i < 5; i++ {
		remembered(p, keyA)
	}
	write(t, file, "rubbish")
	for i := 0; i < 5; i++ {
		remembered(p, keyA)
	}
	write(t, file, grantFile(keyA))
	for i := 0; i < 5; i++ {
		remembered(p, keyA)
	}
	out := buf.String()
	if n := strings.Count(out, "level=ERROR"); n != 2 {
		t.Errorf("%d errors logged for two broken versions of the file, want 2:\n%s", n, out)
	}
	if n := strings.Count(out, "readable again"); n != 1 {
		t.Errorf("%d recoveries logged, want 1:\n%s", n, out)
	}
}

// Calls racing a revoke: once Revoke has returned, no call that starts
// later is granted, whether the revoke ran through the same Persistent or
// another one on the same file. Run with -race.
func TestNoCallAfterARevokeIsGranted(t *testing.T) {
	t.Parallel()
	for _, sameInstance := range []bool{true, false} {
		t.Run(fmt.Sprintf("same instance %v", sameInstance), func(t *testing.T) {
			t.Parallel()
			for round := 0; round < 10; round++ {
				file := filepath.Join(t.TempDir(), "approvals.json")
				agent := openP(t, file)
				cli := agent
				if !sameInstance {
					cli = openP(t, file)
				}
				if err := cli.Add(keyA, time.Now()); err != nil {
					t.Fatal(err)
				}
				var revoked atomic.Bool
				var leaks atomic.Int64
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				for g := 0; g < 4; g++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for ctx.Err() == nil {
							after := revoked.Load()
							if remembered(agent, keyA) && after {
								leaks.Add(1)
							}
						}
					}()
				}
				if n, err := cli.Revoke(func(g session.Grant) bool { return g.Hash == hashA }); err != nil || n != 1 {
					t.Fatalf("revoke: %d %v", n, err)
				}
				revoked.Store(true)
				for i := 0; i < 200; i++ {
					if remembered(agent, keyA) {
						leaks.Add(1)
					}
				}
				cancel()
				wg.Wait()
				if n := leaks.Load(); n > 0 {
					t.Fatalf("round %d: %d calls that started after Revoke returned were granted", round, n)
				}
			}
		})
	}
}
