package host

import (
	"context"
	"sync/atomic"

	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// GuestCalls counts the events that entered a plugin's guest code, by
// plugin and event ("check", "observe", "list").
type GuestCalls struct{ n map[string]*atomic.Int64 }

// Get is how many times plugin ran event.
func (c *GuestCalls) Get(plugin, event string) int64 {
	if n := c.n[plugin+"/"+event]; n != nil {
		return n.Load()
	}
	return 0
}

// CountGuestCalls wraps the WebAssembly plugins of h's current policy so
// that every event that reaches a guest is counted. Events a plugin did not
// ask for in describe return before the guest and are not counted.
func CountGuestCalls(h *Host) *GuestCalls {
	g := h.gen.Load()
	c := &GuestCalls{n: map[string]*atomic.Int64{}}
	counter := func(name, ev string) *atomic.Int64 {
		k := name + "/" + ev
		if c.n[k] == nil {
			c.n[k] = new(atomic.Int64)
		}
		return c.n[k]
	}
	wrap := func(x any) any {
		p, ok := x.(*plugin.Plugin)
		if !ok {
			return x
		}
		return &counted{Plugin: p, check: counter(p.Name(), "check"), observe: counter(p.Name(), "observe"), list: counter(p.Name(), "list")}
	}
	for i, x := range g.checkers {
		g.checkers[i] = wrap(x).(policy.Checker)
	}
	for i, x := range g.observers {
		g.observers[i] = wrap(x).(policy.Observer)
	}
	for i, x := range g.listers {
		g.listers[i] = wrap(x).(policy.Lister)
	}
	return c
}

type counted struct {
	*plugin.Plugin
	check, observe, list *atomic.Int64
}

func (c *counted) Check(ctx context.Context, in *policy.CheckInput) policy.PluginVerdict {
	if c.Handles(plugin.EventCheck) {
		c.check.Add(1)
	}
	return c.Plugin.Check(ctx, in)
}

func (c *counted) Observe(ctx context.Context, in *policy.ObserveInput) policy.ObserveResult {
	if c.Handles(plugin.EventObserve) {
		c.observe.Add(1)
	}
	return c.Plugin.Observe(ctx, in)
}

func (c *counted) List(ctx context.Context, in *policy.ListInput) ([]string, error) {
	if c.Handles(plugin.EventList) {
		c.list.Add(1)
	}
	return c.Plugin.List(ctx, in)
}
