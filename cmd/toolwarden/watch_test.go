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
	"github.com/toolwarden/toolwarden/internal/config"
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

// startWatch watches the config layers at paths (their first content
// loaded) and returns the configs applied, one per change, and what was
// written to stderr.
func startWatch(t *testing.T, paths ...string) (<-chan *config.Config, *signalWriter) {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.Load(paths...)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(ctx, cfg, host.Defaults().WithoutPluginDiskCache())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	applied := make(chan *config.Config, 8)
	stderr := &signalWriter{wrote: make(chan struct{}, 1)}
	lc := &liveConfig{cmd: "wrap", configs: paths, h: h, stderr: stderr,
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

// waitApplied returns the next config applied.
func waitApplied(t *testing.T, applied <-chan *config.Config) *config.Config {
	t.Helper()
	select {
	case cfg := <-applied:
		return cfg
	case <-time.After(failsafe):
		t.Fatal("the change was never applied")
		return nil
	}
}

// waitStderr waits until stderr holds want, failing if a config is
// applied meanwhile.
func waitStderr(t *testing.T, stderr *signalWriter, applied <-chan *config.Config, want string) {
	t.Helper()
	deadline := time.After(failsafe)
	for !strings.Contains(stderr.String(), want) {
		select {
		case <-stderr.wrote:
		case cfg := <-applied:
			t.Fatalf("a change was applied while waiting for %q: %v", want, cfg.Files)
		case <-deadline:
			t.Fatalf("stderr never said %q: %s", want, stderr.String())
		}
	}
}

func TestAChangeToAnyLayerIsApplied(t *testing.T) {
	t.Parallel()
	user := filepath.Join(t.TempDir(), "config.toml")
	project := filepath.Join(t.TempDir(), "project.toml")
	for _, p := range []string{user, project} {
		if err := os.WriteFile(p, []byte(""), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	applied, _ := startWatch(t, user, project)
	if err := os.WriteFile(project, []byte("[apps.fs]\nenabled = false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := waitApplied(t, applied)
	if a := cfg.Apps["fs"]; a == nil || config.Bool(a.Enabled, true) || len(cfg.Files) != 2 {
		t.Errorf("applied: apps.fs = %+v from %v, want it disabled, from both layers", a, cfg.Files)
	}
}

// A plugin module is watched like the config: a broken build is refused,
// and the module that replaces it is applied; so is one that did not
// exist yet when the config naming it was saved.
func TestAPluginModuleIsWatchedAndABrokenOneRefused(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile(filepath.Join("..", "..", "internal", "plugin", "testdata", "wat", "noop.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wasm := filepath.Join(dir, "plugins", "noop.wasm")
	if err := os.MkdirAll(filepath.Dir(wasm), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wasm, good, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte("[policies.noop]\nwasm = \"plugins/noop.wasm\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	applied, stderr := startWatch(t, path)
	if err := os.WriteFile(wasm, []byte("not WebAssembly"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitStderr(t, stderr, applied, "policies.noop")
	if err := os.WriteFile(wasm, good, 0o600); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, applied)

	// A config naming a module not built yet is refused, and applied once
	// the module appears.
	if err := os.WriteFile(path, []byte("[policies.later]\nwasm = \"plugins/later.wasm\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitStderr(t, stderr, applied, "policies.later")
	if err := os.WriteFile(filepath.Join(dir, "plugins", "later.wasm"), good, 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg := waitApplied(t, applied); len(cfg.Policies) != 1 || cfg.Policies[0].Name != "later" {
		t.Errorf("applied policies %v, want later", cfg.Policies)
	}
}
