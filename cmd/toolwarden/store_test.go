package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTheStoreIsTheFlagElseTheEnvironmentElseServesDefault(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	def := "sqlite:" + filepath.Join(state, "toolwarden", "store.db")
	cases := []struct {
		name, flag, env string
		serve           bool
		want            string
	}{
		{"the flag wins over the environment", "sqlite:/a.db", "postgres://u@h/db", true, "sqlite:/a.db"},
		{"the environment names it when no flag does", "", "postgres://u@h/db", false, "postgres://u@h/db"},
		{"serve defaults to the SQLite file in the state directory", "", "", true, def},
		{"the local forms use no store unless one is named", "", "", false, ""},
		{"a blank flag is no flag", "  ", "", true, def},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(storeEnv, tc.env)
			got, err := resolveStore(tc.flag, tc.serve)
			if err != nil || got != tc.want {
				t.Fatalf("resolveStore(%q, %v) = %q, %v; want %q", tc.flag, tc.serve, got, err, tc.want)
			}
		})
	}
}

// serveErr runs toolwarden serve in process with args and returns its
// exit code and stderr; every case here stops before serving.
func serveErr(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := runServe(&env{stdout: &out, stderr: &errb, getenv: os.Getenv}, args)
	return code, errb.String()
}

func TestServeRefusesAnApprovalsFileBesideAStore(t *testing.T) {
	dir := t.TempDir()
	approvals := filepath.Join(dir, "approvals.json")
	t.Run("named by the flag", func(t *testing.T) {
		t.Setenv(storeEnv, "")
		code, stderr := serveErr(t, "--store", "sqlite:"+filepath.Join(dir, "s.db"), "--approvals", approvals)
		if code != exitError || !strings.Contains(stderr, "--approvals and a shared store") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
	t.Run("named by the environment", func(t *testing.T) {
		t.Setenv(storeEnv, "sqlite:"+filepath.Join(dir, "s.db"))
		code, stderr := serveErr(t, "--approvals", approvals)
		if code != exitError || !strings.Contains(stderr, "$"+storeEnv) {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
	if _, err := os.Stat(filepath.Join(dir, "s.db")); !os.IsNotExist(err) {
		t.Fatalf("a refused start created the store: %v", err)
	}
}

func TestServeStopsAtStartWhenItsStoreDoesNotOpenAndNeverShowsThePassword(t *testing.T) {
	t.Setenv(storeEnv, "")
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ url, want string }{
		{"postgres://tw:s3cret-pw@127.0.0.1:1/tw", "the Postgres server must be reachable"},
		{"sqlite:" + filepath.Join(file, "store.db"), "directory must be writable"},
		{"mysql://tw@h/db", "unknown store engine"},
	} {
		code, stderr := serveErr(t, "--store", tc.url)
		if code != exitError || !strings.Contains(stderr, "the shared store did not open") || !strings.Contains(stderr, tc.want) {
			t.Errorf("--store %s: exit %d: %s", tc.url, code, stderr)
		}
		if strings.Contains(stderr, "s3cret-pw") {
			t.Errorf("--store %s: the password is in the error: %s", tc.url, stderr)
		}
	}
}

func TestServeWithoutAStoreOrApprovalsOpensTheDefaultSQLiteFile(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv(storeEnv, "")
	blank := ""
	st, err := serveStore(context.Background(), &serveCmdFlags{Store: &blank}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Engine() != "sqlite" || st.URL() != "sqlite:"+filepath.Join(state, "toolwarden", "store.db") {
		t.Fatalf("opened %s (%s)", st.URL(), st.Engine())
	}
	if _, err := os.Stat(filepath.Join(state, "toolwarden", "store.db")); err != nil {
		t.Fatal(err)
	}
}

func TestServeWithAnApprovalsFileAloneKeepsTheFileAndSaysReplicasNeedAStore(t *testing.T) {
	t.Setenv(storeEnv, "")
	var logged bytes.Buffer
	blank := ""
	f := &serveCmdFlags{Store: &blank}
	f.Approvals = filepath.Join(t.TempDir(), "approvals.json")
	st, err := serveStore(context.Background(), f, slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil || st != nil {
		t.Fatalf("store %v, err %v; want none", st, err)
	}
	if !strings.Contains(logged.String(), "several replicas need a shared store") {
		t.Fatalf("no warning: %s", logged.String())
	}
}
