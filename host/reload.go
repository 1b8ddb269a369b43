package host

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/toolwarden/toolwarden/internal/audit"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// A generation is one policy the host decides with: a config, its compiled
// rules and the plugins loaded for it. It is never modified once published
// (its list records are a cache of what its own plugins said), so a call
// that took a generation at its start decides wholly by it, even when a
// reload publishes the next one meanwhile. Sessions, approvals and the
// audit log belong to the host and outlive every generation.
type generation struct {
	cfg       *config.Config
	rules     *policy.Rules
	checkers  []policy.Checker
	observers []policy.Observer
	// resultLimit is the largest result_limit_kb, in bytes, of the
	// observers (0: none asked for more than the host's cut).
	resultLimit int
	listers     []policy.Lister
	closers     []func(context.Context) error
	warnings    []error
	lists       lists // the list event's last answers, per session, server and app

	// uses counts the calls using the generation, and
	// retired is set once it is no longer the host's current one (Reload
	// replaced it, or the host closed, or it was never published). The
	// first release, or retire, that finds it retired and unused closes
	// the plugins: never while a call may still use them, and never twice.
	uses    atomic.Int64
	retired atomic.Bool
	// done is closed once the plugins were closed; closeErr says how.
	closeOnce sync.Once
	done      chan struct{}
	closeErr  error
}

func newGeneration(cfg *config.Config, rules *policy.Rules) *generation {
	return &generation{cfg: cfg, rules: rules, done: make(chan struct{})}
}

// use is one call's hold on a generation until release.
type use struct {
	g *generation
}

// acquire returns a use of the current generation. A use counts only if
// the generation is still current after it was added: one that Reload
// replaced meanwhile is given back and the loop takes the one that
// replaced it, so a replaced generation is never handed out again. A
// closed host's generation stays current though retired; a call made
// after Close gets it, and its plugins answer as closed plugins do (their
// on_error verdict).
func (h *Host) acquire() use {
	for {
		g := h.gen.Load()
		g.uses.Add(1)
		if h.gen.Load() == g {
			return use{g}
		}
		g.uses.Add(-1)
		g.closeIfUnused()
	}
}

// release ends the use; the last use of a retired generation closes its
// plugins.
func (u use) release() {
	u.g.uses.Add(-1)
	u.g.closeIfUnused()
}

// retire marks g as no longer current (or never to be): once it is also
// unused, it closes.
func (g *generation) retire() {
	g.retired.Store(true)
	g.closeIfUnused()
}

// closeIfUnused closes g if it is retired and no call uses it. Every use
// that counts was added while g was current, so before Reload swapped it
// out and set retired: a count of zero read after retired is set means no
// call uses g. A count above zero with no call left (an acquire that lost
// the race has added but not yet taken back) is not final: whoever takes
// back last reads the count again after its own change, and finds zero.
func (g *generation) closeIfUnused() {
	if g.retired.Load() && g.uses.Load() == 0 {
		g.closeOnce.Do(g.close)
	}
}

func (g *generation) close() {
	var errs []error
	for _, c := range g.closers {
		if err := c(context.Background()); err != nil {
			errs = append(errs, err)
		}
	}
	g.closeErr = errors.Join(errs...)
	close(g.done)
}

// Reload makes cfg the host's policy without losing anything the host
// remembers: sessions (approvals, pins, labels, counters), the approvals
// file and the audit log stay. The new rules are compiled and the new
// plugins loaded first, with the settings the host was built with; only
// if all of that succeeds is the new policy put in place, at once for
// every later call. A call already deciding finishes with the policy it
// started with, and the old plugins are closed when the last such call
// ends.
//
// An invalid cfg, or a plugin that fails to load (unlike New, which serves
// through such a failure with the plugin's on_error verdict), is refused:
// Reload returns why and the running policy keeps deciding. Either way an
// audit log, if any, records a "reload" event. Reloads are serialised.
func (h *Host) Reload(ctx context.Context, cfg *Config) error {
	h.reloadMu.Lock()
	defer h.reloadMu.Unlock()
	if h.closed {
		return errors.New("host is closed: cannot reload")
	}
	next, err := h.build(ctx, cfg, true)
	if err != nil {
		h.recordReload(cfg, err)
		return err
	}
	old := h.gen.Swap(next)
	h.recordReload(cfg, nil)
	old.retire()
	return nil
}

// ReloadRefused records in the audit log (if any) a change that never
// reached Reload, such as a config file that did not load, so that the
// log shows every refused change.
func (h *Host) ReloadRefused(files []string, cause error) {
	if h.audit != nil {
		h.audit.Write(audit.Record{Time: h.now(), Event: "reload", Decision: reloadRecord{Files: files, Outcome: "refused", Error: cause.Error()}})
	}
}

// reloadRecord is the payload of a "reload" audit record.
type reloadRecord struct {
	Files   []string `json:"files,omitempty"`
	Outcome string   `json:"outcome"` // "applied" or "refused"
	Error   string   `json:"error,omitempty"`
}

func (h *Host) recordReload(cfg *config.Config, err error) {
	if h.audit == nil {
		return
	}
	var files []string
	if cfg != nil {
		files = cfg.Files
	}
	if err != nil {
		h.ReloadRefused(files, err)
		return
	}
	h.audit.Write(audit.Record{Time: h.now(), Event: "reload", Decision: reloadRecord{Files: files, Outcome: "applied"}})
}

// build compiles cfg and loads its plugins into a new generation. With
// strict, a plugin that fails to load fails the build (Reload); without,
// it is kept as a warning and answers with its on_error verdict (New).
func (h *Host) build(ctx context.Context, cfg *config.Config, strict bool) (*generation, error) {
	if cfg == nil {
		cfg = config.Default()
	}
	rules, err := policy.Compile(cfg)
	if err != nil {
		return nil, err
	}
	g := newGeneration(cfg, rules)
	if err := g.loadPlugins(ctx, h.settings); err != nil {
		return nil, err
	}
	if strict && len(g.warnings) > 0 {
		g.retire()
		return nil, fmt.Errorf("the plugins of the new config did not load:\n%w", errors.Join(g.warnings...))
	}
	for _, p := range h.settings.plugins {
		if !g.addPlugin(p) {
			g.retire()
			return nil, fmt.Errorf("plugin %q implements none of policy.Checker, policy.Observer and policy.Lister", p.Name())
		}
	}
	return g, nil
}

// reloadState is the part of Host that Reload and Close coordinate on.
type reloadState struct {
	gen      atomic.Pointer[generation]
	settings Settings
	reloadMu sync.Mutex // one Reload (or Close) at a time
	closed   bool       // guarded by reloadMu
}
