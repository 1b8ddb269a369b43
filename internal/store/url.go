package store

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// Engines a store URL can name.
const (
	EngineSQLite   = "sqlite"
	EnginePostgres = "postgres"
)

// target is a parsed store URL: the engine and what the driver opens.
type target struct {
	engine string
	path   string // SQLite: the database file
	dsn    string // Postgres: the URL pgx parses
}

// parseURL reads a --store URL. Its errors never repeat the URL itself
// (it may hold a password): the caller names it with Redact.
func parseURL(raw string) (target, error) {
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok {
		return target{}, errors.New("a store URL starts with sqlite: or postgres:// (for example sqlite:/var/lib/toolwarden/store.db)")
	}
	switch strings.ToLower(scheme) {
	case "sqlite":
		return parseSQLite(rest)
	case "postgres", "postgresql":
		if !strings.HasPrefix(rest, "//") {
			return target{}, errors.New("a Postgres store URL reads postgres://user@host:port/database")
		}
		if _, err := url.Parse(raw); err != nil {
			return target{}, errors.New("the Postgres store URL does not parse as a URL (a password with reserved characters must be percent-encoded)")
		}
		return target{engine: EnginePostgres, dsn: raw}, nil
	}
	if !looksLikeScheme(scheme) {
		// Not quoted: it may be a key=value connection string with a
		// password in it.
		return target{}, errors.New("this is not a store URL: use sqlite:PATH or postgres://URL (a key=value connection string is not taken)")
	}
	return target{}, fmt.Errorf("unknown store engine %q: use sqlite:PATH or postgres://URL", scheme)
}

// looksLikeScheme reports whether s could be a URL scheme (RFC 3986: a
// letter, then letters, digits, "+", "-" or "."), short enough to quote.
func looksLikeScheme(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i, c := range s {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// parseSQLite reads what follows "sqlite:": a path (relative to the
// working directory, or absolute), or //<empty host>/abs/path.
func parseSQLite(rest string) (target, error) {
	path := rest
	if strings.HasPrefix(rest, "//") {
		path = strings.TrimPrefix(rest, "//")
		if !strings.HasPrefix(path, "/") {
			return target{}, errors.New("sqlite://HOST/... names a host; a SQLite store is a local file: sqlite:PATH or sqlite:///abs/path")
		}
	}
	if path == "" {
		return target{}, errors.New("the SQLite store URL names no file: use sqlite:PATH")
	}
	if strings.HasPrefix(path, "~") {
		return target{}, errors.New("a SQLite store path is not expanded by a shell: write the home directory out (sqlite:/home/me/...)")
	}
	return target{engine: EngineSQLite, path: filepath.Clean(path)}, nil
}

// redacted stands for a password in a URL shown to a person.
const redacted = "xxxxx"

// Redact returns the store URL as errors and logs may show it: a
// password (in the user part or a password= parameter) replaced. A URL
// that does not parse is not shown at all, since where its password
// begins cannot be told.
func Redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, ":")
	if ok && strings.EqualFold(scheme, "sqlite") {
		// A file name holds no password, but a URL meant for another
		// engine pasted after sqlite: might.
		if strings.ContainsAny(rest, "?@") || strings.Contains(strings.ToLower(rest), "password") {
			return "sqlite:(a path that may hold a password, not shown)"
		}
		return raw
	}
	// Only scheme://... is shown: a key=value connection string
	// ("host=db password=...") parses as a URL path and would be shown
	// whole.
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || !ok || !strings.HasPrefix(rest, "//") || !strings.EqualFold(u.Scheme, scheme) {
		switch strings.ToLower(scheme) {
		case "postgres", "postgresql":
			return scheme + ":(a URL that does not parse, not shown)"
		}
		return "(a store URL that does not parse, not shown)"
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redacted)
		}
	}
	u.Fragment, u.RawFragment = "", "" // no engine reads it; nothing to show
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		// Which part of a malformed query is a password cannot be told.
		return u.Scheme + "://(a URL whose parameters do not parse, not shown)"
	}
	changed := false
	for k := range q {
		if strings.Contains(strings.ToLower(k), "password") {
			q[k] = []string{redacted}
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// DefaultURL is the store `serve` uses when none is named:
// sqlite:<state dir>/toolwarden/store.db, where the state directory is
// $XDG_STATE_HOME, else ~/.local/state.
func DefaultURL() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		// The XDG spec says a relative value is invalid and to be ignored.
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("the default store lives in $XDG_STATE_HOME or ~/.local/state, and neither is known (%v): name one with --store", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return "sqlite:" + filepath.Join(dir, "toolwarden", "store.db"), nil
}
