package host

import (
	"context"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/plugin"
)

// testBuiltins stand in for Settings without WithBuiltins in this
// package's own tests (builtins_test.go sets them); in a program they are
// nil, and a host given no modules has none.
var testBuiltins map[string][]byte

// loadPlugins compiles and instantiates the enabled [policies.*] plugins, in
// config order, in a runtime of the generation's own (closing it closes
// them). A plugin that fails to load still answers every event with its
// on_error verdict (deny unless configured), so the host keeps serving and
// fails closed; the load errors are kept for Warnings (and make Reload
// refuse the generation).
func (g *generation) loadPlugins(ctx context.Context, s Settings) error {
	enabled := 0
	for _, p := range g.cfg.Policies {
		if config.Bool(p.Enabled, true) {
			enabled++
		}
	}
	if enabled == 0 {
		return nil
	}
	rt := s.pluginRuntime
	if rt == nil {
		own, err := NewPluginRuntime(ctx, s)
		if err != nil {
			return err
		}
		g.closers = append(g.closers, own.Close)
		rt = own
	}
	// A shared runtime's logger is whoever made it; this host's plugins log
	// to this host's logger.
	builtins := s.builtins
	if builtins == nil {
		builtins = testBuiltins
	}
	ps, err := plugin.LoadAll(ctx, rt, g.cfg.Policies, builtins, plugin.LogTo(s.logger))
	if err != nil {
		g.warnings = append(g.warnings, err)
	}
	for _, p := range ps {
		if s.pluginRuntime != nil {
			// A shared runtime outlives the generation: close its plugins.
			g.closers = append(g.closers, func(context.Context) error { p.Close(); return nil })
		}
		if p.Handles(plugin.EventCheck) {
			g.checkers = append(g.checkers, p)
		}
		if p.Handles(plugin.EventObserve) {
			g.observers = append(g.observers, p)
			g.resultLimit = max(g.resultLimit, p.ResultLimit())
		}
		if p.Handles(plugin.EventList) {
			g.listers = append(g.listers, p)
		}
	}
	return nil
}

// Warnings are problems New found but served through, such as a plugin
// that failed to load (it answers with its on_error verdict). A Reload
// that succeeded found none.
func (h *Host) Warnings() []error { return h.gen.Load().warnings }
