package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// Plugin session state (pdk/ABI.md section 12). A plugin that says
// "state": true in describe gets its state in every check and observe
// envelope and may answer with a "state" update. The state lives in the
// host's session, so it outlives any instance.
//
// Atomicity: a check or observe of a stateful plugin holds the plugin's
// slot in the session from reading the state, through the guest call, to
// applying the update. Concurrent calls in one session therefore run that
// plugin one after another and each sees the updates before it; other
// sessions have their own slots and never wait.

// Stateful reports whether the plugin asked for session state in describe.
func (p *Plugin) Stateful() bool { return p.stateful }

// parseDescribeState reads describe's optional "state": true. Any other
// value than a bool (or null) is a bad output.
func parseDescribeState(out []byte) (bool, error) {
	var d struct {
		State *bool `json:"state"`
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return false, fmt.Errorf(`"state": %v`, err)
	}
	return d.State != nil && *d.State, nil
}

// stateOutput is the "state" key of a check or observe output.
type stateOutput struct {
	State *struct {
		Add    map[string]json.Number `json:"add"`
		Set    map[string]string      `json:"set"`
		Delete []string               `json:"delete"`
	} `json:"state"`
}

// parseStateUpdate reads the optional "state" key of a check or observe
// output; nil when absent or empty.
func parseStateUpdate(out []byte) (*session.StateUpdate, error) {
	var so stateOutput
	if err := json.Unmarshal(out, &so); err != nil {
		return nil, fmt.Errorf(`"state": %v`, err)
	}
	if so.State == nil {
		return nil, nil
	}
	u := session.StateUpdate{Set: so.State.Set, Delete: so.State.Delete}
	if len(so.State.Add) > 0 {
		u.Add = make(map[string]int64, len(so.State.Add))
		for k, n := range so.State.Add {
			v, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil {
				return nil, fmt.Errorf(`"state.add.%s": %s is not an integer in the int64 range`, truncate(k, 40), truncate(string(n), 40))
			}
			u.Add[k] = v
		}
	}
	if len(u.Delete) > session.MaxStateKeys {
		return nil, fmt.Errorf(`"state.delete": more than %d keys`, session.MaxStateKeys)
	}
	if u.Empty() {
		return nil, nil
	}
	return &u, nil
}

// appendState writes `,"state":{"counters":{..},"entries":{..}}`, keys
// sorted.
func appendState(b []byte, st session.PluginState) []byte {
	b = append(b, `,"state":{"counters":{`...)
	for i, k := range sortedStateKeys(st.Counters) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = strconv.AppendInt(b, st.Counters[k], 10)
	}
	b = append(b, `},"entries":{`...)
	for i, k := range sortedStateKeys(st.Entries) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, st.Entries[k])
	}
	return append(b, "}}"...)
}

func sortedStateKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// holdState takes the plugin's slot in the session of store, for an event
// that reads and may update the state. It returns nil (and nothing to
// release) when the plugin is not stateful or there is no store.
func (p *Plugin) holdState(ctx context.Context, store policy.StateStore) (*session.PluginSlot, *Fault) {
	if !p.stateful || store == nil {
		return nil, nil
	}
	slot := store.Plugin(p.name)
	if err := slot.Acquire(ctx); err != nil {
		return nil, p.fault(FaultCanceled, err.Error(), err)
	}
	return slot, nil
}

// applyState reads the state update in the instance's last output (when
// the event answered with code 0) and applies it to slot. A bad or
// over-the-bound update is a bad output: the event fails and nothing of
// the update applies.
func (in *instance) applyState(slot *session.PluginSlot) (*session.StateUpdate, *session.PluginState, *Fault) {
	if uint32(in.stack[0]) != CodeOK || len(in.out) == 0 {
		return nil, nil, nil
	}
	u, err := parseStateUpdate(in.out)
	if err == nil && u != nil {
		var st session.PluginState
		if st, err = slot.Apply(*u); err == nil {
			return u, &st, nil
		}
	}
	if err != nil {
		return nil, nil, in.p.fault(FaultBadOutput, "bad output: "+err.Error(), err)
	}
	return nil, nil, nil
}

// checkStateful is Check for a plugin with state.
func (p *Plugin) checkStateful(ctx context.Context, c *policy.CheckInput) policy.PluginVerdict {
	slot, f := p.holdState(ctx, c.State)
	if f != nil {
		return p.failVerdict(f)
	}
	defer slot.Release()
	in, f := p.acquire(ctx)
	if f != nil {
		return p.failVerdict(f)
	}
	st := slot.State()
	in.state = &st
	in.buf = in.appendCheck(in.buf[:0], c)
	in.state = nil
	v, f := in.check(ctx, in.buf)
	if f == nil {
		v.StateUpdate, v.State, f = in.applyState(slot)
	}
	p.release(in, f)
	if f != nil {
		return p.failVerdict(f)
	}
	return v
}

// observeStateful is Observe for a plugin with state.
func (p *Plugin) observeStateful(ctx context.Context, o *policy.ObserveInput) policy.ObserveResult {
	slot, f := p.holdState(ctx, o.State)
	if f != nil {
		return policy.ObserveResult{Err: f}
	}
	defer slot.Release()
	in, f := p.acquire(ctx)
	if f != nil {
		return policy.ObserveResult{Err: f}
	}
	st := slot.State()
	in.state = &st
	in.buf = in.appendObserve(in.buf[:0], o)
	in.state = nil
	labels, f := in.list(ctx, EventObserve, in.buf)
	var res policy.ObserveResult
	if f == nil {
		res.StateUpdate, res.State, f = in.applyState(slot)
	}
	p.release(in, f)
	if f != nil {
		return policy.ObserveResult{Err: f}
	}
	res.Labels = labels
	return res
}
