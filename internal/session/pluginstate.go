package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"unicode/utf8"
)

// Bounds of one plugin's state in one session (pdk/ABI.md section 12). An
// update that would cross one fails as a whole: the event fails and the
// plugin's on_error applies.
const (
	MaxStateKeys  = 64   // counters and entries together
	MaxStateKey   = 256  // bytes of a key
	MaxStateValue = 1024 // bytes of an entry's value
)

// PluginState is what one plugin keeps in one session: counters and small
// string entries. A value handed out is never changed afterwards (an update
// builds a new one), so it may be read without a lock.
type PluginState struct {
	Counters map[string]int64  `json:"counters,omitempty"`
	Entries  map[string]string `json:"entries,omitempty"`
}

// Empty reports whether the state holds nothing.
func (s PluginState) Empty() bool { return len(s.Counters) == 0 && len(s.Entries) == 0 }

// StateUpdate is what a plugin asks to change: add to counters (a counter
// that does not exist starts at 0), set entries, delete keys (counters and
// entries alike: a deleted counter is reset). Deletes apply first, then
// adds, then sets.
type StateUpdate struct {
	Add    map[string]int64  `json:"add,omitempty"`
	Set    map[string]string `json:"set,omitempty"`
	Delete []string          `json:"delete,omitempty"`
}

// Empty reports whether the update changes nothing.
func (u StateUpdate) Empty() bool { return len(u.Add) == 0 && len(u.Set) == 0 && len(u.Delete) == 0 }

// ErrStateBusy is returned by Acquire when ctx ends while another event of
// the same plugin in the same session holds the state.
var ErrStateBusy = errors.New("plugin state: waiting for the plugin's previous event in this session")

// PluginSlot is one plugin's state in one session. An event that reads the
// state and may update it holds the slot (Acquire .. Release) across the
// whole read, plugin call and update, so that concurrent calls in one
// session see each other's updates: with a budget of 2, exactly 2 of 5
// concurrent calls get through. Different sessions have different slots and
// never wait for each other.
type PluginSlot struct {
	turn  chan struct{} // a one-token lock that a waiter can give up on
	cur   PluginState   // guarded by turn for writers; see State
	owner *Session
}

// Acquire takes the slot, waiting for the event that holds it; it gives up
// when ctx ends.
func (sl *PluginSlot) Acquire(ctx context.Context) error {
	select {
	case sl.turn <- struct{}{}:
		return nil
	default:
	}
	select {
	case sl.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: %v", ErrStateBusy, ctx.Err())
	}
}

// Release gives the slot back.
func (sl *PluginSlot) Release() { <-sl.turn }

// State returns the current state. Its maps must not be modified.
func (sl *PluginSlot) State() PluginState {
	sl.owner.mu.RLock()
	st := sl.cur
	sl.owner.mu.RUnlock()
	return st
}

// Apply applies u as a whole, or not at all when it breaks a bound (the
// error says which). The caller holds the slot.
func (sl *PluginSlot) Apply(u StateUpdate) (PluginState, error) {
	old := sl.State()
	if u.Empty() {
		return old, nil
	}
	next, err := applyUpdate(old, u)
	if err != nil {
		return old, err
	}
	sl.owner.mu.Lock()
	sl.cur = next
	sl.owner.mu.Unlock()
	sl.owner.changes.Add(1)
	return next, nil
}

// applyUpdate returns old with u applied; old is left alone.
func applyUpdate(old PluginState, u StateUpdate) (PluginState, error) {
	next := PluginState{
		Counters: make(map[string]int64, len(old.Counters)+len(u.Add)),
		Entries:  make(map[string]string, len(old.Entries)+len(u.Set)),
	}
	for k, v := range old.Counters {
		next.Counters[k] = v
	}
	for k, v := range old.Entries {
		next.Entries[k] = v
	}
	for _, k := range u.Delete {
		delete(next.Counters, k)
		delete(next.Entries, k)
	}
	for _, k := range sortedKeys(u.Add) {
		if err := checkKey(k); err != nil {
			return old, err
		}
		if _, ok := next.Entries[k]; ok {
			return old, fmt.Errorf("plugin state: %q is an entry, not a counter (delete it first)", k)
		}
		d, v := u.Add[k], next.Counters[k]
		if d > 0 && v > math.MaxInt64-d || d < 0 && v < math.MinInt64-d {
			return old, fmt.Errorf("plugin state: counter %q would overflow", k)
		}
		next.Counters[k] = v + d
	}
	for _, k := range sortedKeys(u.Set) {
		if err := checkKey(k); err != nil {
			return old, err
		}
		if _, ok := next.Counters[k]; ok {
			return old, fmt.Errorf("plugin state: %q is a counter, not an entry (delete it first)", k)
		}
		v := u.Set[k]
		if len(v) > MaxStateValue || !utf8.ValidString(v) {
			return old, fmt.Errorf("plugin state: entry %q: value must be valid UTF-8 of at most %d bytes (it has %d)", k, MaxStateValue, len(v))
		}
		next.Entries[k] = v
	}
	if n := len(next.Counters) + len(next.Entries); n > MaxStateKeys {
		return old, fmt.Errorf("plugin state: %d keys, over the bound of %d per plugin per session (delete some)", n, MaxStateKeys)
	}
	if len(next.Counters) == 0 {
		next.Counters = nil
	}
	if len(next.Entries) == 0 {
		next.Entries = nil
	}
	return next, nil
}

// checkPluginState holds a state read from outside (a session file) to
// the bounds an update keeps.
func checkPluginState(ps PluginState) error {
	if n := len(ps.Counters) + len(ps.Entries); n > MaxStateKeys {
		return fmt.Errorf("plugin state: %d keys, over the bound of %d", n, MaxStateKeys)
	}
	for k := range ps.Counters {
		if err := checkKey(k); err != nil {
			return err
		}
		if _, ok := ps.Entries[k]; ok {
			return fmt.Errorf("plugin state: %q is both a counter and an entry", truncKey(k))
		}
	}
	for k, v := range ps.Entries {
		if err := checkKey(k); err != nil {
			return err
		}
		if len(v) > MaxStateValue || !utf8.ValidString(v) {
			return fmt.Errorf("plugin state: entry %q: value must be valid UTF-8 of at most %d bytes", truncKey(k), MaxStateValue)
		}
	}
	return nil
}

func checkKey(k string) error {
	if k == "" || len(k) > MaxStateKey || !utf8.ValidString(k) {
		return fmt.Errorf("plugin state: key %q must be valid UTF-8 of 1-%d bytes", truncKey(k), MaxStateKey)
	}
	return nil
}

func truncKey(k string) string {
	if len(k) > 40 {
		return k[:40] + "..."
	}
	return k
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Plugin returns the state slot of plugin (its [policies.<name>] key) in
// this session, creating an empty one on first use. The state lives in
// the session, not in any plugin instance: it survives an instance being
// discarded and a config reload, and ends with the session.
func (s *Session) Plugin(plugin string) *PluginSlot {
	s.mu.RLock()
	sl := s.plugins[plugin]
	s.mu.RUnlock()
	if sl != nil {
		return sl
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if sl = s.plugins[plugin]; sl == nil {
		if s.plugins == nil {
			s.plugins = map[string]*PluginSlot{}
		}
		sl = &PluginSlot{turn: make(chan struct{}, 1), owner: s}
		s.plugins[plugin] = sl
	}
	return sl
}

// PluginStates returns every plugin's non-empty state in the session.
func (s *Session) PluginStates() map[string]PluginState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.pluginStatesLocked()
}

func (s *Session) pluginStatesLocked() map[string]PluginState {
	var out map[string]PluginState
	for name, sl := range s.plugins {
		if sl.cur.Empty() {
			continue
		}
		if out == nil {
			out = map[string]PluginState{}
		}
		out[name] = sl.cur
	}
	return out
}

// restorePluginsLocked replaces every plugin state with states. Slots that
// exist keep their identity (an event may be waiting on one).
func (s *Session) restorePluginsLocked(states map[string]PluginState) {
	for _, sl := range s.plugins {
		sl.cur = PluginState{}
	}
	for name, st := range states {
		sl := s.plugins[name]
		if sl == nil {
			if s.plugins == nil {
				s.plugins = map[string]*PluginSlot{}
			}
			sl = &PluginSlot{turn: make(chan struct{}, 1), owner: s}
			s.plugins[name] = sl
		}
		sl.cur = st
	}
}
