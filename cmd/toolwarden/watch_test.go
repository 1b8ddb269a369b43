package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/host/config"
)

func TestWatchedFilesAreTheLayersAndPluginModulesAlsoByTheirRealPaths(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "config.toml")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(real, []byte("[policies.mine]\nwasm = \"mine.wasm\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "config.toml")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	cfg, err := config.Load(link)
	if err != nil {
		t.Fatal(err)
	}
	got := watchedFiles([]string{link}, cfg)
	for _, want := range []string{link, real, filepath.Join(dir, "mine.wasm")} {
		if !slices.Contains(got, want) {
			t.Errorf("watched %v, want %s among them", got, want)
		}
	}
}

// signalWriter collects writes and signals each one.
type signalWriter struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.b.Write(p)
	w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// startWatch watches the config file at path (its first content loaded)
// and returns the configs applied, one per change, and what was written to
// stderr.
func startWatch(t *testing.T, path string) (<-chan *config.Config, *signalWriter) {
	t.Helper()
	ctx := context.Background()
	cfg, err := loadConfig([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(ctx, cfg, host.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	applied := make(chan *config.Config, 8)
	stderr := &signalWriter{wrote: make(chan struct{}, 1)}
	lc := &liveConfig{cmd: "wrap", configs: []string{path}, h: h, stderr: stderr,
		log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		apply: func(ctx context.Context, c *config.Config) error {
			if err := h.Reload(ctx, c); err != nil {
				return err
			}
			applied <- c
			return nil
		}}
	t.Cleanup(watchConfig(ctx, lc, true))
	return applied, stderr
}

// failsafe bounds a wait for something that must happen; it is not a
// measure of how fast it happens.
const failsafe = 20 * time.Second

func TestAnEditorsRenameOverTheConfigIsApplied(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(""), 0o600); err != nil {
		t.Fatal(err)
	}
	applied, _ := startWatch(t, path)
	tmp := filepath.Join(dir, ".config.toml.swp")
	if err := os.WriteFile(tmp, []byte("[apps.fs]\nenabled = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	select {
	case cfg := <-applied:
		if a := cfg.Apps["fs"]; a == nil || config.Bool(a.Enabled, true) {
			t.Errorf("applied config: apps.fs = %+v, want it disabled", a)
		}
	case <-time.After(failsafe):
		t.Fatal("the saved config was never applied")
	}
}

func TestAConfigThatDoesNotLoadIsRefusedWithWhereAndWhy(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte(""), 0o600); err != nil {
		t.Fatal(err)
	}
	applied, stderr := startWatch(t, path)
	if err := os.WriteFile(path, []byte("\n[apps.fs]\nenabeld = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(failsafe)
	for !strings.Contains(stderr.String(), "refused") {
		select {
		case <-stderr.wrote:
		case cfg := <-applied:
			t.Fatalf("a config that does not load was applied: %+v", cfg)
		case <-deadline:
			t.Fatal("the broken config was never reported")
		}
	}
	if got := stderr.String(); !strings.Contains(got, path+":3:1:") || !strings.Contains(got, "enabeld") {
		t.Errorf("stderr %q: want the file:line:col and the key", got)
	}
}
