package catalog_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/catalog"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// idA and idB are two servers a config could both call "fs".
var (
	idA = serverspec.Identity{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/a"}, Dir: "/a"}
	idB = serverspec.Identity{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/b"}, Dir: "/b"}
)

func entry(server string, n int) *catalog.Entry { return entryOf(server, idA, n) }

func entryOf(server string, id serverspec.Identity, n int) *catalog.Entry {
	var tools []json.RawMessage
	for i := range n {
		tools = append(tools, json.RawMessage(fmt.Sprintf(`{"name":"t%d","annotations":{"readOnlyHint":true}}`, i)))
	}
	return &catalog.Entry{Server: server, Identity: id, Source: "test", ListedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Tools: tools}
}

func TestAnEntryReadsBackAsWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := catalog.Write(dir, entry("fs", 3)); err != nil {
		t.Fatal(err)
	}
	got, err := catalog.Read(dir, "fs", idA)
	if err != nil {
		t.Fatal(err)
	}
	if got.Server != "fs" || len(got.Tools) != 3 || got.Source != "test" || !got.ListedAt.Equal(entry("fs", 0).ListedAt) {
		t.Fatalf("%+v", got)
	}
	if raw, ok := got.Find("t2"); !ok || !strings.Contains(string(raw), "readOnlyHint") {
		t.Fatalf("Find(t2) = %s, %v", raw, ok)
	}
	if _, ok := got.Find("t9"); ok {
		t.Fatal("found a tool that was not listed")
	}
	fi, err := os.Stat(filepath.Join(dir, catalog.FileName("fs", idA)))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("file mode: %v %v", fi.Mode(), err)
	}
}

// Readers racing writers of the same server see a whole entry every time
// (the old one or a new one), and no temporary file is left behind.
func TestConcurrentWritesNeverShowHalfAnEntry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := catalog.Write(dir, entry("fs", 1)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readErr error
	var readMu sync.Mutex
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := catalog.Read(dir, "fs", idA); err != nil {
				readMu.Lock()
				readErr = err
				readMu.Unlock()
				return
			}
		}
	})
	var writers sync.WaitGroup
	for w := range 4 {
		writers.Go(func() {
			for i := range 25 {
				if err := catalog.Write(dir, entry("fs", 50+w*i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	writers.Wait()
	close(stop)
	wg.Wait()
	if readErr != nil {
		t.Fatalf("a reader saw a partial entry: %v", readErr)
	}
	names, _ := os.ReadDir(dir)
	if len(names) != 1 {
		t.Fatalf("files left: %v", names)
	}
}

func TestAFileThatIsNotAnEntryForTheServerIsCorrupt(t *testing.T) {
	t.Parallel()
	good := `{"version":2,"server":"fs","identity":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/a"],"cwd":"/a"},"source":"s","listed_at":"2026-01-02T03:04:05Z","tools":[{"name":"a"}]}`
	cases := []struct{ name, data string }{
		{"an empty file", ``},
		{"not JSON", `{"version":1,`},
		{"an empty object", `{}`},
		{"another version", strings.Replace(good, `"version":2`, `"version":3`, 1)},
		{"the old format, which says no identity", strings.Replace(good, `"version":2`, `"version":1`, 1)},
		{"no identity", strings.Replace(good, `"identity":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","/a"],"cwd":"/a"},`, ``, 1)},
		{"another server's identity under this one's file", strings.Replace(good, `"/a"]`, `"/b"]`, 1)},
		{"another server's entry", strings.Replace(good, `"server":"fs"`, `"server":"other"`, 1)},
		{"no time", strings.Replace(good, `"listed_at":"2026-01-02T03:04:05Z",`, ``, 1)},
		{"no tools", strings.Replace(good, `,"tools":[{"name":"a"}]`, ``, 1)},
		{"a tool that is not an object", strings.Replace(good, `[{"name":"a"}]`, `["a"]`, 1)},
		{"an unknown key", strings.Replace(good, `"source"`, `"sorce"`, 1)},
		{"data after the entry", good + `{}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, catalog.FileName("fs", idA)), []byte(c.data), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := catalog.Read(dir, "fs", idA)
			if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "tools sync") {
				t.Fatalf("Read = %v, want ErrCorrupt that says what to do", err)
			}
			entries, errs := catalog.ReadAll(dir)
			if len(entries) != 0 || len(errs) != 1 {
				t.Fatalf("ReadAll = %v, %v", entries, errs)
			}
		})
	}
	dir := t.TempDir()
	if _, err := catalog.Read(dir, "fs", idA); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing entry: %v", err)
	}
}

func TestNoServerNameReachesOutsideTheFolder(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, name := range []string{"fs", "my-server_2.x", "../escape", "a/b", `a\b`, ".hidden", "~x", "", strings.Repeat("n", 101), "fs\n"} {
		f := catalog.FileName(name, idA)
		if strings.ContainsAny(f, `/\`) || strings.HasPrefix(f, ".") || !strings.HasSuffix(f, ".json") {
			t.Errorf("FileName(%q) = %q", name, f)
		}
		if prev, dup := seen[f]; dup {
			t.Errorf("FileName(%q) = FileName(%q) = %q", name, prev, f)
		}
		seen[f] = name
	}
	dir := t.TempDir()
	sub := filepath.Join(dir, "cat")
	if err := catalog.Write(sub, entry("../escape", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, catalog.FileName("escape", idA))); err == nil {
		t.Fatal("a server name wrote outside the catalog folder")
	}
	if e, err := catalog.Read(sub, "../escape", idA); err != nil || e.Server != "../escape" {
		t.Fatalf("%v %v", e, err)
	}
	entries, errs := catalog.ReadAll(sub)
	if len(entries) != 1 || len(errs) != 0 {
		t.Fatalf("ReadAll = %v, %v", entries, errs)
	}
}

// A file copied under another server's name is not taken as that server's.
func TestAnEntryCountsOnlyUnderItsOwnName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := catalog.Write(dir, entry("fs", 1)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, catalog.FileName("fs", idA)))
	if err := os.WriteFile(filepath.Join(dir, catalog.FileName("github", idA)), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.Read(dir, "github", idA); !errors.Is(err, catalog.ErrCorrupt) {
		t.Fatalf("Read(github) = %v", err)
	}
	entries, errs := catalog.ReadAll(dir)
	if len(entries) != 1 || len(errs) != 1 {
		t.Fatalf("ReadAll = %v, %v", entries, errs)
	}
}

func TestTheWriterKeepsTheNewestEntryOfEachServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := catalog.NewWriter(dir)
	for i := 1; i <= 20; i++ {
		w.Put(entry("fs", i), func(err error) { t.Error(err) })
		w.Put(entry("mem", 21-i), func(err error) { t.Error(err) })
	}
	w.Flush()
	fs, err := catalog.Read(dir, "fs", idA)
	if err != nil || len(fs.Tools) != 20 {
		t.Fatalf("fs: %v %v", fs, err)
	}
	mem, err := catalog.Read(dir, "mem", idA)
	if err != nil || len(mem.Tools) != 1 {
		t.Fatalf("mem: %v %v", mem, err)
	}
}

func TestTheWriterReportsWhatItCannotWrite(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "not-a-folder")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	w := catalog.NewWriter(file)
	var got error
	w.Put(entry("fs", 1), func(err error) { got = err })
	w.Flush()
	if got == nil {
		t.Fatal("a write into a file was not reported")
	}
}

func TestTheDefaultFolderFollowsTheEnvironment(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	if d, err := catalog.DefaultDir(env(catalog.EnvDir, "/x/cat", "HOME", "/home/me")); err != nil || d != "/x/cat" {
		t.Errorf("TOOLWARDEN_CATALOG: %q %v", d, err)
	}
	if d, err := catalog.DefaultDir(env(catalog.EnvDir, "off")); err != nil || d != "" {
		t.Errorf("off: %q %v", d, err)
	}
	if _, err := catalog.DefaultDir(env()); err == nil || !strings.Contains(err.Error(), catalog.EnvDir) {
		t.Errorf("nothing set: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version":2,"server":"fs","identity":{"command":"npx"},"source":"s","listed_at":"2026-01-02T03:04:05Z","tools":[{"name":"a"}]}`))
	f.Add([]byte(`{"version":2,"server":"fs","identity":{"url":"https://x"},"listed_at":"2026-01-02T03:04:05Z","tools":[]}`))
	f.Add([]byte(`{"version":1,"server":"fs","listed_at":"2026-01-02T03:04:05Z","tools":[]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := catalog.Parse(data)
		if err != nil {
			if !errors.Is(err, catalog.ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		if e.Server == "" || e.Version != catalog.Version || e.Tools == nil || e.Identity.IsZero() {
			t.Fatalf("accepted %+v", e)
		}
		for _, raw := range e.Tools {
			if !json.Valid(raw) {
				t.Fatalf("invalid tool %q", raw)
			}
		}
	})
}

// Two servers under one name (two projects' "fs") keep an entry each: one
// never evicts the other, each reads back only as itself, and Others
// names the one a reader did not ask for.
func TestEntriesOfOneNameWithDifferentIdentitiesCoexist(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := catalog.Write(dir, entryOf("fs", idA, 1)); err != nil {
		t.Fatal(err)
	}
	if err := catalog.Write(dir, entryOf("fs", idB, 2)); err != nil {
		t.Fatal(err)
	}
	a, errA := catalog.Read(dir, "fs", idA)
	b, errB := catalog.Read(dir, "fs", idB)
	if errA != nil || errB != nil || len(a.Tools) != 1 || len(b.Tools) != 2 || !a.Identity.Equal(idA) || !b.Identity.Equal(idB) {
		t.Fatalf("a %v %v, b %v %v", a, errA, b, errB)
	}
	idC := idA
	idC.Env = []string{"NODE_OPTIONS=--require /tmp/x.js"}
	if _, err := catalog.Read(dir, "fs", idC); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a third identity (same command, code-loading env) read: %v", err)
	}
	others, old := catalog.Others(dir, "fs", idC)
	if len(others) != 2 || old {
		t.Fatalf("Others = %v, %v", others, old)
	}
	if entries, errs := catalog.ReadAll(dir); len(entries) != 2 || len(errs) != 0 {
		t.Fatalf("ReadAll = %v, %v", entries, errs)
	}
}

// An entry in the old format (one file per name, no identity) is never
// read as any server's, and Others says it is there.
func TestAnOldFormatEntryIsNeverBelieved(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	old := `{"version":1,"server":"fs","source":"s","listed_at":"2026-01-02T03:04:05Z","tools":[{"name":"write_file","annotations":{"readOnlyHint":true}}]}`
	if err := os.WriteFile(filepath.Join(dir, "fs.json"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.Read(dir, "fs", idA); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Read = %v", err)
	}
	if others, isOld := catalog.Others(dir, "fs", idA); len(others) != 0 || !isOld {
		t.Fatalf("Others = %v, %v", others, isOld)
	}
	if _, err := catalog.Parse([]byte(old)); !errors.Is(err, catalog.ErrOldFormat) {
		t.Fatalf("Parse = %v", err)
	}
	if entries, errs := catalog.ReadAll(dir); len(entries) != 0 || len(errs) != 1 || !errors.Is(errs[0], catalog.ErrOldFormat) {
		t.Fatalf("ReadAll = %v, %v", entries, errs)
	}
}

// Something other than a file where an entry should be (a folder, a FIFO
// that would block a reader forever) is reported, not read.
func TestAnEntryThatIsNotARegularFileIsCorrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, catalog.FileName("fs", idA)), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := catalog.Read(dir, "fs", idA); !errors.Is(err, catalog.ErrCorrupt) {
		t.Fatalf("Read of a folder = %v", err)
	}
}

func TestAnEntryWithoutIdentityIsNotWritten(t *testing.T) {
	t.Parallel()
	err := catalog.Write(t.TempDir(), entryOf("fs", serverspec.Identity{}, 1))
	if err == nil || !strings.Contains(err.Error(), "which server") {
		t.Fatalf("Write = %v", err)
	}
}
