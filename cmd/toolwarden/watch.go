package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/proxy"
)

// Live changes: wrap and proxy watch the config files they loaded and the
// plugin modules those name, and apply a change without a restart (see
// docs/proxy.md, "Live changes"). A change that does not load is refused
// loudly and the running policy stays.

// settle is how long the watched files must stay quiet before a change is
// applied: an editor's save is several events (write, or rename and
// create), and a half-written file must not be loaded.
const settle = 150 * time.Millisecond

// liveConfig reloads a running wrap or proxy's policy.
type liveConfig struct {
	cmd     string   // "wrap" or "proxy", for messages
	configs []string // the config layers in force (cli.ConfigPaths)
	reqs    []string // every requirements file in force (RequirementsPaths)
	h       *host.Host
	apply   func(context.Context, *config.Config) error // proxy.Reload
	stderr  io.Writer
	log     *slog.Logger

	files  []string // what is watched now: config layers and plugin modules
	digest [sha256.Size]byte
}

// watchConfig starts applying changes of the config files (and the plugin
// modules they name) until ctx is done: on every settled change when
// watch is set, and at once on SIGHUP. It does nothing without config
// files. The returned function stops it.
func watchConfig(ctx context.Context, lc *liveConfig, watch bool) (stop func()) {
	if len(lc.configs) == 0 {
		return func() {}
	}
	lc.files = watchedFiles(append(slices.Clone(lc.configs), lc.reqs...), lc.h.Config())
	lc.digest = digestFiles(lc.files)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	var w *fsnotify.Watcher
	if watch {
		var err error
		if w, err = fsnotify.NewWatcher(); err != nil {
			fmt.Fprintf(lc.stderr, "toolwarden %s: cannot watch the config for changes (%v); send SIGHUP to reload\n", lc.cmd, err)
			w = nil
		} else {
			lc.watchDirs(w)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lc.loop(ctx, w, hup)
	}()
	return func() {
		cancel()
		<-done
		signal.Stop(hup)
		if w != nil {
			_ = w.Close()
		}
	}
}

// loop waits for changes and applies them, one at a time.
func (lc *liveConfig) loop(ctx context.Context, w *fsnotify.Watcher, hup <-chan os.Signal) {
	var events <-chan fsnotify.Event
	var errs <-chan error
	if w != nil {
		events, errs = w.Events, w.Errors
	}
	timer := time.NewTimer(settle)
	timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			timer.Stop()
			lc.reload(ctx, w, "SIGHUP", true)
		case ev := <-events:
			if ev.Op == fsnotify.Chmod || !lc.watches(ev.Name) {
				continue
			}
			timer.Reset(settle)
		case err := <-errs:
			lc.log.Warn("watching the config for changes", "err", err)
		case <-timer.C:
			lc.reload(ctx, w, "a watched file changed", false)
		}
	}
}

// reload loads the config files again and applies them. Unless forced, a
// change that leaves every watched file's bytes as they were is ignored.
func (lc *liveConfig) reload(ctx context.Context, w *fsnotify.Watcher, why string, force bool) {
	d := digestFiles(lc.files)
	if !force && d == lc.digest {
		return
	}
	lc.digest = d
	cfg, err := config.LoadWithRequirements(lc.reqs, lc.configs...)
	if err != nil {
		lc.refuse(err)
		lc.h.ReloadRefused(lc.configs, err)
		return
	}
	// Watch what the new config names even if it is refused: a plugin
	// that is missing now may be built next, and that must be seen.
	lc.files = watchedFiles(append(slices.Clone(lc.configs), lc.reqs...), cfg)
	lc.digest = digestFiles(lc.files)
	if w != nil {
		lc.watchDirs(w)
	}
	if err := lc.apply(ctx, cfg); err != nil {
		lc.refuse(err) // the host's audit log has it already
		return
	}
	lc.log.Info("config reloaded", "why", why, "files", lc.configs)
}

func (lc *liveConfig) refuse(err error) {
	fmt.Fprintf(lc.stderr, "toolwarden %s: config change refused; the running policy stays until the files load:\n%v\n", lc.cmd, err)
}

// watchDirs watches the folders of the watched files, not the files: an
// editor that saves by writing a new file and renaming it over the old one
// replaces the inode a file watch would follow.
func (lc *liveConfig) watchDirs(w *fsnotify.Watcher) {
	seen := map[string]bool{}
	for _, f := range lc.files {
		dir := filepath.Dir(f)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if err := w.Add(dir); err != nil {
			lc.log.Warn("cannot watch a config folder; changes there need SIGHUP", "dir", dir, "err", err)
		}
	}
}

func (lc *liveConfig) watches(name string) bool {
	abs, err := filepath.Abs(name)
	return err == nil && slices.Contains(lc.files, abs)
}

// watchedFiles are the config layers and the plugin modules cfg names,
// as absolute paths, each also by its real path when it is a symbolic link
// (a dotfiles checkout), so that editing the link's target is seen.
func watchedFiles(configs []string, cfg *config.Config) []string {
	var out []string
	add := func(p string) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return
		}
		out = append(out, abs)
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			out = append(out, real)
		}
	}
	for _, c := range configs {
		add(c)
	}
	if cfg != nil {
		for _, p := range cfg.Policies {
			if p.Wasm != "" {
				add(p.Wasm)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// digestFiles hashes the watched files' names and bytes (a missing file
// hashes as missing), so that events that change nothing are ignored.
func digestFiles(files []string) [sha256.Size]byte {
	h := sha256.New()
	for _, f := range files {
		h.Write([]byte(f))
		h.Write([]byte{0})
		if data, err := os.ReadFile(f); err == nil {
			h.Write([]byte{1})
			h.Write(data)
		}
		h.Write([]byte{0})
	}
	var d [sha256.Size]byte
	h.Sum(d[:0])
	return d
}

// watchFlag returns, for wrap's or proxy's flags (--no-watch among them), a
// function that starts live changes for a host serving through p (see
// watchConfig); that function returns the one that stops them.
func watchFlag(fs *cli.Flags) func(ctx context.Context, e *env, f *serveFlags, h *host.Host, p *proxy.Proxy) (stop func()) {
	return func(ctx context.Context, e *env, f *serveFlags, h *host.Host, p *proxy.Proxy) func() {
		return watchConfig(ctx, &liveConfig{
			cmd: fs.Name, configs: cli.ConfigPaths(e.getenv, f.Configs), reqs: config.RequirementsPaths(e.getenv, f.Requirements...), h: h, apply: p.Reload, stderr: e.stderr, log: f.logger(e),
		}, !f.NoWatch)
	}
}
