// Package catalog is the tool catalog: per user, one JSON file per MCP
// server holding that server's tool definitions exactly as it last listed
// them, when, who listed them, and which server it was (its identity:
// command, arguments, folder and code-loading environment, or URL). `toolwarden
// tools sync` and every wrap and proxy write it; hook mode reads it,
// because an agent's hook event names a tool but carries none of its
// annotations.
//
// Entries are keyed by server name AND identity: two projects that both
// call a different server "fs" each keep theirs, and a reader asks for the
// entry of the very server it will run (Lookup), never for a name alone.
//
// A file that cannot be read, or is not what this package writes, is
// treated as absent: the catalog only ever supplies what a server claimed,
// and without it the spec's pessimistic defaults apply.
//
//	e := &catalog.Entry{Server: "fs", Identity: spec.Identity(), Source: "toolwarden wrap: npx ...", ListedAt: time.Now(), Tools: raws}
//	err := catalog.Write(dir, e)
//	got, err := catalog.Read(dir, "fs", spec.Identity())
package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// Version is the file format's version. Version 1 entries said no
// identity; they are never believed (ErrOldFormat).
const Version = 2

// maxFileSize bounds what is read of one file: a server with thousands of
// large tool definitions fits, a runaway file is refused.
const maxFileSize = 16 << 20

// StaleAfter is the age past which an entry is still used but said to be
// old (a hook's reasons, `toolwarden tools list`): the server may have
// changed since it was listed.
const StaleAfter = 7 * 24 * time.Hour

// Entry is one server's tools as last listed.
type Entry struct {
	Version int    `json:"version"`
	Server  string `json:"server"`
	// Identity is the server that was listed, as it was started.
	Identity serverspec.Identity `json:"identity"`
	// Source says who listed the tools: "toolwarden wrap: CMD ARGS",
	// "toolwarden tools sync: FILE (mcpServers.NAME)".
	Source   string    `json:"source"`
	ListedAt time.Time `json:"listed_at"`
	// Tools are the definitions of tools/list's "tools" as listed (JSON
	// whitespace aside).
	Tools []json.RawMessage `json:"tools"`
}

// ErrCorrupt marks a catalog file that exists but cannot be used.
var ErrCorrupt = errors.New("catalog file is corrupt")

// ErrOldFormat marks an entry written before entries said which server
// they list: it may be any server of that name, so it is not used.
var ErrOldFormat = errors.New("catalog entry is in the old format, which does not say which server it lists")

// Find returns the definition of the tool named name, if listed.
func (e *Entry) Find(name string) (json.RawMessage, bool) {
	for _, raw := range e.Tools {
		var probe struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &probe) == nil && probe.Name == name {
			return raw, true
		}
	}
	return nil, false
}

// Names are the listed tools' names, in listing order.
func (e *Entry) Names() []string {
	out := make([]string, 0, len(e.Tools))
	for _, raw := range e.Tools {
		var probe struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &probe) == nil {
			out = append(out, probe.Name)
		}
	}
	return out
}

// Age is how long ago the tools were listed.
func (e *Entry) Age(now time.Time) time.Duration { return now.Sub(e.ListedAt) }

// FileName is the file that holds the entry of server with identity id:
// the name itself when it is a plain file name, else a digest of it (so
// that no server name can reach outside the catalog folder or collide with
// another), then "@" and a digest of the identity.
func FileName(server string, id serverspec.Identity) string {
	return namePrefix(server) + "@" + id.Key() + ".json"
}

// namePrefix is the part of a file name that says the server's name.
func namePrefix(server string) string {
	if plainName(server) {
		return server
	}
	sum := sha256.Sum256([]byte(server))
	return "~" + hex.EncodeToString(sum[:16])
}

// oldFileName is where format 1 kept a server's one entry.
func oldFileName(server string) string { return namePrefix(server) + ".json" }

func plainName(s string) bool {
	if s == "" || len(s) > 100 || s[0] == '.' || s[0] == '~' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// Write stores e as its server's file in dir, atomically: a temporary file
// in the same folder renamed over the old one, so a reader sees the old
// entry or the new one, never half of one, and concurrent writers (two
// wraps of one server) each leave a whole file.
func Write(dir string, e *Entry) error {
	if e.Server == "" {
		return errors.New("catalog entry has no server name")
	}
	if e.Identity.IsZero() {
		return fmt.Errorf("catalog entry for %s says no command or URL: hooks could not tell which server it lists", e.Server)
	}
	c := *e
	c.Version = Version
	if c.Tools == nil {
		c.Tools = []json.RawMessage{}
	}
	data, err := json.Marshal(&c)
	if err != nil {
		return fmt.Errorf("catalog entry for %s: %w", e.Server, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("catalog folder: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(dir, FileName(e.Server, e.Identity)))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("catalog: writing %s: %w", FileName(e.Server, e.Identity), werr)
	}
	return nil
}

// Read returns the entry of server with identity id from dir. A missing
// file is an error that matches fs.ErrNotExist; a file that is not a
// catalog entry for that server is one that matches ErrCorrupt.
func Read(dir, server string, id serverspec.Identity) (*Entry, error) {
	e, err := readFile(filepath.Join(dir, FileName(server, id)), server)
	if err == nil && !e.Identity.Equal(id) {
		err = fmt.Errorf("%s: %w: it lists %s (run `toolwarden tools sync` to write it again)", FileName(server, id), ErrCorrupt, e.Identity)
		e = nil
	}
	return e, err
}

// Others says what dir holds for server besides the entry of identity
// id: the identities of its other entries, and whether a format 1 entry
// (which says none) is there. A hook that finds no entry for the server it
// will run says so, rather than believing another server's list.
func Others(dir, server string, id serverspec.Identity) (others []serverspec.Identity, old bool) {
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	prefix := namePrefix(server) + "@"
	for _, n := range names {
		switch {
		case n.Name() == oldFileName(server):
			old = true
		case strings.HasPrefix(n.Name(), prefix) && n.Name() != FileName(server, id):
			if e, err := readFile(filepath.Join(dir, n.Name()), server); err == nil {
				others = append(others, e.Identity)
			}
		}
	}
	return others, old
}

func readFile(path, server string) (*Entry, error) {
	// A FIFO or a device would block or never end: only a regular file
	// (followed through a link) is read.
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file (remove it)", path, ErrCorrupt)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	e, err := Parse(data)
	if err == nil && server != "" && e.Server != server {
		err = fmt.Errorf("%w: it holds server %q", ErrCorrupt, e.Server)
	}
	if len(data) > maxFileSize {
		err = fmt.Errorf("%w: larger than %d bytes", ErrCorrupt, maxFileSize)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w (run `toolwarden tools sync` to write it again)", path, err)
	}
	return e, nil
}

// Parse reads one catalog file strictly: the version this package writes,
// a server name, and tools that are JSON objects. Anything else is
// ErrCorrupt.
func Parse(data []byte) (*Entry, error) {
	var probe struct {
		Version int `json:"version"`
	}
	if json.Unmarshal(data, &probe) == nil && probe.Version == 1 {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, ErrOldFormat)
	}
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the entry", ErrCorrupt)
	}
	switch {
	case e.Version != Version:
		return nil, fmt.Errorf("%w: version %d, want %d", ErrCorrupt, e.Version, Version)
	case e.Identity.IsZero():
		return nil, fmt.Errorf("%w: no identity (command or URL)", ErrCorrupt)
	case e.Server == "":
		return nil, fmt.Errorf("%w: no server name", ErrCorrupt)
	case e.ListedAt.IsZero():
		return nil, fmt.Errorf("%w: no listed_at time", ErrCorrupt)
	case e.Tools == nil:
		return nil, fmt.Errorf("%w: no tools array", ErrCorrupt)
	}
	for i, raw := range e.Tools {
		if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
			return nil, fmt.Errorf("%w: tools[%d] is not an object", ErrCorrupt, i)
		}
	}
	return &e, nil
}

// ReadAll returns every entry in dir, sorted by server name, and an error
// for each file that could not be read (a format 1 entry among them). A missing dir holds no entries.
func ReadAll(dir string) ([]*Entry, []error) {
	names, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{err}
	}
	var out []*Entry
	var errs []error
	for _, n := range names {
		if n.IsDir() || !strings.HasSuffix(n.Name(), ".json") || strings.HasPrefix(n.Name(), ".") {
			continue
		}
		e, err := readFile(filepath.Join(dir, n.Name()), "")
		if err == nil && FileName(e.Server, e.Identity) != n.Name() {
			err = fmt.Errorf("%s: %w: it holds server %q", filepath.Join(dir, n.Name()), ErrCorrupt, e.Server)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out, errs
}
