package host

import (
	"context"

	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/host/plugin"
)

// loadPlugins compiles and instantiates the enabled [policies.*] plugins, in
// config order. A plugin that fails to load still answers every event with
// its on_error verdict (deny unless configured), so the host keeps serving
// and fails closed; the load errors are kept for Warnings.
func (h *Host) loadPlugins(ctx context.Context, s Settings) error {
	enabled := 0
	for _, p := range h.cfg.Policies {
		if config.Bool(p.Enabled, true) {
			enabled++
		}
	}
	if enabled == 0 {
		return nil
	}
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: s.pluginCacheDir, NoDiskCache: s.noPluginDiskCache, Logger: s.logger})
	if err != nil {
		return err
	}
	h.closers = append(h.closers, rt.Close)
	ps, err := plugin.LoadAll(ctx, rt, h.cfg.Policies, nil)
	if err != nil {
		h.warnings = append(h.warnings, err)
	}
	for _, p := range ps {
		if p.Handles(plugin.EventCheck) {
			h.checkers = append(h.checkers, p)
		}
		if p.Handles(plugin.EventObserve) {
			h.observers = append(h.observers, p)
		}
		if p.Handles(plugin.EventList) {
			h.listers = append(h.listers, p)
		}
	}
	return nil
}

// Warnings are problems New found but served through, such as a plugin
// that failed to load (it answers with its on_error verdict).
func (h *Host) Warnings() []error { return h.warnings }
