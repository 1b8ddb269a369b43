package store

import (
	"context"
	"strings"
	"testing"
)

func TestParseURLAcceptsEachSpellingTheContractNames(t *testing.T) {
	cases := []struct {
		url, engine, path string
	}{
		{"sqlite:/var/lib/tw/store.db", EngineSQLite, "/var/lib/tw/store.db"},
		{"sqlite:///var/lib/tw/store.db", EngineSQLite, "/var/lib/tw/store.db"},
		{"sqlite:rel/store.db", EngineSQLite, "rel/store.db"},
		{"SQLite:/x/../y.db", EngineSQLite, "/y.db"},
		{"postgres://u:p@db:5432/tw", EnginePostgres, ""},
		{"postgresql://u@db/tw?sslmode=require", EnginePostgres, ""},
	}
	for _, c := range cases {
		got, err := parseURL(c.url)
		if err != nil || got.engine != c.engine || got.path != c.path {
			t.Errorf("parseURL(%q) = %+v, %v; want engine %s path %q", c.url, got, err, c.engine, c.path)
		}
	}
}

func TestParseURLRefusesWhatItCannotOpenAndSaysWhatToWrite(t *testing.T) {
	cases := map[string]string{
		"":                          "starts with sqlite:",
		"/var/lib/store.db":         "starts with sqlite:",
		"sqlite:":                   "names no file",
		"sqlite://host/store.db":    "names a host",
		"sqlite:~/store.db":         "not expanded",
		"mysql://u:p@h/db":          "unknown store engine",
		"postgres:u@h/db":           "postgres://user@host",
		"postgres://u:p%zz@h/db":    "does not parse",
		"sqlite::memory:":           "", // parses; Open refuses it (below)
		"postgresql://[::1/db":      "does not parse",
		"postgres://u:pw@h:port/db": "does not parse",
		"redis://u:secret@h:6379/0": "unknown store engine",
	}
	for url, want := range cases {
		_, err := parseURL(url)
		if want == "" {
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseURL(%q) = %v; want an error saying %q", url, err, want)
		}
	}
	_, err := Open(context.Background(), "sqlite::memory:", Options{})
	if err == nil || !strings.Contains(err.Error(), "in-memory") {
		t.Errorf("Open(sqlite::memory:) = %v; want a refusal naming the in-memory database", err)
	}
}

func TestRedactHidesThePasswordInEveryFormAURLCarriesIt(t *testing.T) {
	const pw = "S3cr3t-pw"
	cases := map[string]string{
		"postgres://alice:" + pw + "@db:5432/tw":                 "postgres://alice:xxxxx@db:5432/tw",
		"postgresql://alice:" + pw + "@db/tw?sslmode=disable":    "postgresql://alice:xxxxx@db/tw?sslmode=disable",
		"postgres://alice@db/tw?password=" + pw + "&sslmode=off": "postgres://alice@db/tw?password=xxxxx&sslmode=off",
		"postgres://alice@db/tw":                                 "postgres://alice@db/tw",
		"sqlite:/var/lib/tw/store.db":                            "sqlite:/var/lib/tw/store.db",
		"postgres://alice:" + pw + "%zz@db/tw":                   "postgres:(a URL that does not parse, not shown)",
		"alice:" + pw + "@db":                                    "(a store URL that does not parse, not shown)",
	}
	for in, want := range cases {
		got := Redact(in)
		if got != want {
			t.Errorf("Redact(%q) = %q; want %q", in, got, want)
		}
		if strings.Contains(got, pw) {
			t.Errorf("Redact(%q) shows the password: %q", in, got)
		}
	}
}

func TestDefaultURLIsStoreDBUnderTheUserStateDirectory(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/srv/state")
	if got, err := DefaultURL(); err != nil || got != "sqlite:/srv/state/toolwarden/store.db" {
		t.Errorf("with XDG_STATE_HOME: %q, %v", got, err)
	}
	t.Setenv("HOME", "/home/ann")
	for _, xdg := range []string{"", "relative/state"} { // a relative value is ignored (XDG spec)
		t.Setenv("XDG_STATE_HOME", xdg)
		if got, err := DefaultURL(); err != nil || got != "sqlite:/home/ann/.local/state/toolwarden/store.db" {
			t.Errorf("XDG_STATE_HOME=%q: %q, %v", xdg, got, err)
		}
	}
	t.Setenv("HOME", "")
	if _, err := DefaultURL(); err == nil || !strings.Contains(err.Error(), "--store") {
		t.Errorf("with no home: %v; want an error saying to name one with --store", err)
	}
}
