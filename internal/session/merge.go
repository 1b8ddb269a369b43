package session

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/toolwarden/toolwarden/internal/rawjson"
)

// Sessions shared between processes (several `serve` replicas, or a
// developer's wrap and hook on one store) meet here: what one process
// stored and what another holds are merged so that nothing is lost that
// matters for safety. Labels (taint) only ever grow; approvals and scoped
// approvals are unions; a pin or a plugin's state is one process's word,
// and the process that changed it last, writing it, wins.

// ArgsDigest is what a shared "always" grant bound to arguments is
// matched by: the SHA-256, in hex, of the arguments' canonical JSON
// (rawjson.Canonical), so that key order, spacing and escapes do not
// matter and nothing else does either. Absent arguments are the empty
// object, as MCP reads them.
func ArgsDigest(args json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	c, err := rawjson.Canonical(args)
	if err != nil {
		return "", fmt.Errorf("digest of the arguments: %w", err)
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// MergeState is stored and mine together, for a store to write back when
// a process saves mine over what another process stored meanwhile:
//
//   - labels: the union, stored's first (a taint is never lost);
//   - approvals and scoped approvals: the union (an answer of one scoped
//     grant stays one grant: mine's grants that stored does not hold
//     already are numbered after stored's);
//   - pins: mine's for the tools mine holds a pin of, stored's for the
//     rest;
//   - plugin states: mine's for each plugin mine names (an empty state
//     there is a plugin mine reset), stored's for the rest;
//   - counters: the larger of each.
//
// Nothing of stored is lost that mine did not replace. A process sends
// as mine only the pins and plugin states it changed (Session.Since), so
// that its stale copy of another's change does not win.
func MergeState(stored, mine State) State {
	out := State{Version: 1, ID: stored.ID}
	if out.ID == "" {
		out.ID = mine.ID
	}
	out.Labels = unionLabels(stored.Labels, mine.Labels)
	out.Approvals = unionApprovals(stored.Approvals, mine.Approvals)
	out.Scoped = unionScoped(stored.Scoped, mine.Scoped)
	out.Pins = mergePins(stored.Pins, mine.Pins)
	out.Plugins = mergePlugins(stored.Plugins, mine.Plugins)
	out.Counters = Counters{
		Calls:  max(stored.Counters.Calls, mine.Counters.Calls),
		Asks:   max(stored.Counters.Asks, mine.Counters.Asks),
		Denies: max(stored.Counters.Denies, mine.Counters.Denies),
	}
	return out
}

func unionLabels(a, b []string) []string {
	seen := make(map[string]struct{}, len(a)+len(b))
	var out []string
	for _, l := range slices.Concat(a, b) {
		if _, ok := seen[l]; ok || l == "" {
			continue
		}
		seen[l] = struct{}{}
		out = append(out, l)
	}
	return out
}

func unionApprovals(a, b []ApprovalKey) []ApprovalKey {
	set := make(map[ApprovalKey]struct{}, len(a)+len(b))
	for _, k := range slices.Concat(a, b) {
		set[k] = struct{}{}
	}
	out := slices.Collect(maps.Keys(set))
	sortApprovals(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

func sortApprovals(list []ApprovalKey) {
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		for _, c := range [...][2]string{{a.Server, b.Server}, {a.Tool, b.Tool}, {a.App, b.App}, {a.Connector, b.Connector}, {a.Hash, b.Hash}} {
			if c[0] != c[1] {
				return c[0] < c[1]
			}
		}
		return false
	})
}

// scopedGrant is one answer's scopes, as a value two processes' copies
// can be compared by (its Grant number is each process's own).
type scopedGrant []ScopedApproval

// groupScoped splits list into its grants, each sorted, in the order of
// their first appearance, with their Grant numbers.
func groupScoped(list []ScopedApproval) ([]scopedGrant, []uint64) {
	var order []uint64
	by := map[uint64]scopedGrant{}
	for _, a := range list {
		g := a.Grant
		if _, ok := by[g]; !ok {
			order = append(order, g)
		}
		a.Grant = 0
		by[g] = append(by[g], a)
	}
	out := make([]scopedGrant, len(order))
	for i, g := range order {
		sortScoped(by[g])
		out[i] = by[g]
	}
	return out, order
}

// unionScoped is stored's scoped approvals as they are, then each of
// mine's grants that stored does not hold, under a number of its own.
// Numbering mine's grants anew keeps two processes' grant 1 apart: scopes
// of separate answers never combine (internal/policy, scope_remember.go).
func unionScoped(stored, mine []ScopedApproval) []ScopedApproval {
	have, numbers := groupScoped(stored)
	next := uint64(0)
	for _, n := range numbers {
		next = max(next, n)
	}
	out := slices.Clone(stored)
	theirs, _ := groupScoped(mine)
	for _, g := range theirs {
		if containsGrant(have, g) {
			continue
		}
		next++
		for _, a := range g {
			a.Grant = next
			out = append(out, a)
		}
		have = append(have, g)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func containsGrant(list []scopedGrant, g scopedGrant) bool {
	for _, h := range list {
		if slices.Equal(h, g) {
			return true
		}
	}
	return false
}

// sortScoped orders scoped approvals by grant, then by what they cover,
// so that a snapshot reads the same every time.
func sortScoped(list []ScopedApproval) {
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Grant != b.Grant {
			return a.Grant < b.Grant
		}
		for _, c := range [...][2]string{{a.Key.Server, b.Key.Server}, {a.Key.Tool, b.Key.Tool}, {a.Key.App, b.Key.App},
			{a.Key.Connector, b.Key.Connector}, {a.Key.Hash, b.Key.Hash}, {a.Plugin, b.Plugin}, {a.Code, b.Code},
			{a.Arg, b.Arg}, {a.Glob, b.Glob}, {a.Regex, b.Regex}} {
			if c[0] != c[1] {
				return c[0] < c[1]
			}
		}
		return false
	})
}

func mergePins(stored, mine []PinState) []PinState {
	by := make(map[toolKey]string, len(stored)+len(mine))
	for _, p := range stored {
		by[toolKey{p.Server, p.Tool}] = p.Hash
	}
	for _, p := range mine {
		by[toolKey{p.Server, p.Tool}] = p.Hash
	}
	return pinList(by)
}

func pinList(by map[toolKey]string) []PinState {
	if len(by) == 0 {
		return nil
	}
	out := make([]PinState, 0, len(by))
	for k, h := range by {
		out = append(out, PinState{Server: k.server, Tool: k.tool, Hash: h})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Server != out[j].Server {
			return out[i].Server < out[j].Server
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

// mergePlugins is stored's plugin states with mine's put over them, one
// plugin at a time; the states left empty are dropped.
func mergePlugins(stored, mine map[string]PluginState) map[string]PluginState {
	out := map[string]PluginState{}
	maps.Copy(out, stored)
	maps.Copy(out, mine)
	maps.DeleteFunc(out, func(_ string, ps PluginState) bool { return ps.Empty() })
	if len(out) == 0 {
		return nil
	}
	return out
}

func samePluginState(a, b PluginState) bool {
	return maps.Equal(a.Counters, b.Counters) && maps.Equal(a.Entries, b.Entries)
}

// Changes counts the changes this process made to the session's pins,
// approvals, scoped approvals, labels and plugin states (not its
// counters, and not what Restore or Absorb brought in). A host sharing
// the session saves it when the count moved since its last save.
func (s *Session) Changes() uint64 { return s.changes.Load() }

// Since is the session's state to save over a stored one (MergeState's
// mine), measured against base, the state the session was last in step
// with: every label, approval and scoped approval, but only the pins and
// plugin states that changed since base (a plugin reset to empty is
// there, empty), so that what another process changed meanwhile is not
// overwritten by this process's unchanged copy.
func (s *Session) Since(base State) State {
	st := s.Snapshot()
	basePins := make(map[toolKey]string, len(base.Pins))
	for _, p := range base.Pins {
		basePins[toolKey{p.Server, p.Tool}] = p.Hash
	}
	st.Pins = slices.DeleteFunc(st.Pins, func(p PinState) bool {
		h, ok := basePins[toolKey{p.Server, p.Tool}]
		return ok && h == p.Hash
	})
	mine := map[string]PluginState{}
	for name, ps := range st.Plugins {
		if !samePluginState(ps, base.Plugins[name]) {
			mine[name] = ps
		}
	}
	for name := range base.Plugins {
		if _, ok := st.Plugins[name]; !ok {
			mine[name] = PluginState{} // reset here since base
		}
	}
	st.Plugins = nil
	if len(mine) > 0 {
		st.Plugins = mine
	}
	return st
}

// Absorb merges stored, the session's state as another process saved
// it, into the live session; base is the state the session was last in
// step with. Labels, approvals and scoped approvals are added (a taint is
// never lost); a pin or a plugin's state is taken from stored unless this
// session changed it since base, in which case its own change stands and
// is saved later; counters take the larger of each. Nothing Absorb brings
// in counts as a change (Changes).
func (s *Session) Absorb(stored, base State) {
	s.addLabels(stored.Labels, false)
	s.mu.Lock()
	for _, a := range stored.Approvals {
		s.approvals[a] = struct{}{}
	}
	s.absorbPinsLocked(stored.Pins, base.Pins)
	s.absorbPluginsLocked(stored.Plugins, base.Plugins)
	s.mu.Unlock()
	s.absorbScoped(stored.Scoped)
	maxInto(&s.calls, stored.Counters.Calls)
	maxInto(&s.asks, stored.Counters.Asks)
	maxInto(&s.denies, stored.Counters.Denies)
}

func (s *Session) absorbPinsLocked(stored, base []PinState) {
	basePins := make(map[toolKey]string, len(base))
	for _, p := range base {
		basePins[toolKey{p.Server, p.Tool}] = p.Hash
	}
	for _, p := range stored {
		k := toolKey{p.Server, p.Tool}
		live, ok := s.pins[k]
		if b, inBase := basePins[k]; !ok || inBase && live == b {
			s.pins[k] = p.Hash
		}
	}
}

func (s *Session) absorbPluginsLocked(stored, base map[string]PluginState) {
	for _, name := range slices.Collect(maps.Keys(stored)) {
		s.absorbPluginLocked(name, stored[name], base[name])
	}
	for name := range base {
		if _, ok := stored[name]; !ok {
			s.absorbPluginLocked(name, PluginState{}, base[name])
		}
	}
}

// absorbPluginLocked takes the stored state of one plugin unless this
// session changed it since base. A slot that exists keeps its identity
// (an event may be waiting on it).
func (s *Session) absorbPluginLocked(name string, stored, base PluginState) {
	sl := s.plugins[name]
	if sl != nil && !samePluginState(sl.cur, base) {
		return // changed here since base: this process's word stands
	}
	if sl == nil {
		if stored.Empty() {
			return
		}
		if s.plugins == nil {
			s.plugins = map[string]*PluginSlot{}
		}
		sl = &PluginSlot{turn: make(chan struct{}, 1), owner: s}
		s.plugins[name] = sl
	}
	sl.cur = stored
}

// absorbScoped adds each stored grant the session does not hold yet,
// under a grant number of this session's own.
func (s *Session) absorbScoped(stored []ScopedApproval) {
	if len(stored) == 0 {
		return
	}
	incoming, _ := groupScoped(stored)
	s.scoped.mu.Lock()
	defer s.scoped.mu.Unlock()
	var live []ScopedApproval
	for _, list := range s.scoped.by {
		live = append(live, list...)
	}
	have, _ := groupScoped(live)
	for _, g := range incoming {
		if containsGrant(have, g) {
			continue
		}
		if s.scoped.by == nil {
			s.scoped.by = map[ApprovalKey][]ScopedApproval{}
		}
		s.scoped.grants++
		for _, a := range g {
			a.Grant = s.scoped.grants
			s.scoped.by[a.Key] = append(s.scoped.by[a.Key], a)
		}
		have = append(have, g)
	}
}

// restoreScoped replaces the session's scoped approvals with list.
func (s *Session) restoreScoped(list []ScopedApproval) {
	s.scoped.mu.Lock()
	defer s.scoped.mu.Unlock()
	s.scoped.by = nil
	s.scoped.grants = 0
	for _, a := range list {
		if s.scoped.by == nil {
			s.scoped.by = map[ApprovalKey][]ScopedApproval{}
		}
		s.scoped.by[a.Key] = append(s.scoped.by[a.Key], a)
		s.scoped.grants = max(s.scoped.grants, a.Grant)
	}
}

func maxInto(v interface {
	Load() int64
	CompareAndSwap(old, new int64) bool
}, n int64) {
	for {
		cur := v.Load()
		if cur >= n || v.CompareAndSwap(cur, n) {
			return
		}
	}
}

// DecodeState reads a state another process stored (a session file's
// bytes, a store's row), holding it to the bounds an update keeps: a state
// damaged or edited past them is refused, and the caller fails closed.
func DecodeState(data []byte) (State, error) { return decodeState(data) }
