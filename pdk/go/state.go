package pdk

import "strconv"

// Session state (pdk/ABI.md section 12). A plugin that sets Plugin.State
// gets its own counters and entries in every check and observe event and
// may change them: the host keeps them in its session (they outlive any
// instance), applies a check's changes before the next check of the same
// session runs the plugin, and drops them with the session.
//
//	Check: func(c *pdk.Check) pdk.Verdict {
//		if c.State().Counter("open_world") >= 2 {
//			return pdk.AskBecause("budget", "more than 2 open-world calls in this session")
//		}
//		return pdk.NoOpinion().Add("open_world", 1)
//	},

// Bounds the host enforces per plugin per session; an update over one
// fails the event (the policy's on_error applies).
const (
	MaxStateKeys  = 64
	MaxStateKey   = 256
	MaxStateValue = 1024
)

// State is the plugin's session state as the event sees it, and the
// changes the event asks for. Reads see the state before the event's own
// changes.
type State struct {
	v      Value
	add    []stateAdd
	set    []stateSet
	delete []string
}

type stateAdd struct {
	key string
	n   int64
}

type stateSet struct{ key, value string }

func (s *State) reset(v Value) {
	s.v = v
	s.add, s.set, s.delete = s.add[:0], s.set[:0], s.delete[:0]
}

// State returns the plugin's session state (empty unless Plugin.State is
// set). Changes made through it are sent with the event's output.
func (e *envelope) State() *State { return &e.state }

// beginState readies the event's State: the input's "state" for a
// stateful plugin, nothing to send yet.
func (p *Plugin) beginState() {
	v := Value{}
	if p.State {
		v = p.env.get("state")
	}
	p.env.state.reset(v)
}

// Counter returns counter key, 0 when it does not exist.
func (s *State) Counter(key string) int64 {
	v := s.v.Get("counters").Get(key)
	if v.Kind() != Number {
		return 0
	}
	n, err := strconv.ParseInt(string(v.Raw()), 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// Entry returns entry key and whether it exists.
func (s *State) Entry(key string) (string, bool) {
	return s.v.Get("entries").Get(key).Str()
}

// Add adds n (which may be negative) to counter key; a counter that does
// not exist starts at 0.
func (s *State) Add(key string, n int64) { s.add = append(s.add, stateAdd{key, n}) }

// Set sets entry key to value (at most MaxStateValue bytes).
func (s *State) Set(key, value string) { s.set = append(s.set, stateSet{key, value}) }

// Delete removes counter or entry key (a counter so reset starts at 0).
func (s *State) Delete(key string) { s.delete = append(s.delete, key) }

func (s *State) empty() bool { return len(s.add) == 0 && len(s.set) == 0 && len(s.delete) == 0 }

// Add, Set and Delete on a Verdict change the session state with it (see
// State): pdk.AllowBecause(..).Add("calls", 1).
func (v Verdict) Add(key string, n int64) Verdict {
	v.state = append(v.state[:len(v.state):len(v.state)], stateOp{op: 'a', key: key, n: n})
	return v
}

// Set: see Add.
func (v Verdict) Set(key, value string) Verdict {
	v.state = append(v.state[:len(v.state):len(v.state)], stateOp{op: 's', key: key, value: value})
	return v
}

// Delete: see Add.
func (v Verdict) Delete(key string) Verdict {
	v.state = append(v.state[:len(v.state):len(v.state)], stateOp{op: 'd', key: key})
	return v
}

type stateOp struct {
	op         byte
	key, value string
	n          int64
}

func (s *State) takeVerdict(v *Verdict) {
	for _, o := range v.state {
		switch o.op {
		case 'a':
			s.Add(o.key, o.n)
		case 's':
			s.Set(o.key, o.value)
		case 'd':
			s.Delete(o.key)
		}
	}
}

// withState adds the event's state changes to out (a check or observe
// output, possibly empty) and, for describe of a stateful plugin, asks for
// state. Repeated adds to one key are summed; the last set wins.
func (p *Plugin) withState(event uint32, out []byte) []byte {
	switch event {
	case EventDescribe:
		if !p.State {
			return out
		}
		return spliceMember(out, `"state":true`)
	case EventCheck, EventObserve:
	default:
		return out
	}
	s := &p.env.state
	if s.empty() {
		return out
	}
	b := []byte(`"state":{`)
	first := true
	sep := func() {
		if !first {
			b = append(b, ',')
		}
		first = false
	}
	if len(s.add) > 0 {
		sep()
		b = append(b, `"add":{`...)
		seen := map[string]int64{}
		var order []string
		for _, a := range s.add {
			if _, ok := seen[a.key]; !ok {
				order = append(order, a.key)
			}
			seen[a.key] += a.n
		}
		for i, k := range order {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = strconv.AppendInt(b, seen[k], 10)
		}
		b = append(b, '}')
	}
	if len(s.set) > 0 {
		sep()
		b = append(b, `"set":{`...)
		for i, e := range s.set {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e.key)
			b = append(b, ':')
			b = appendString(b, e.value)
		}
		b = append(b, '}')
	}
	if len(s.delete) > 0 {
		sep()
		b = append(b, `"delete":`...)
		b = appendStrings(b, s.delete)
	}
	b = append(b, '}')
	s.reset(Value{})
	return spliceMember(out, string(b))
}

// spliceMember adds member to the JSON object out, or makes an object of
// it when out is empty.
func spliceMember(out []byte, member string) []byte {
	if len(out) == 0 {
		return append(append(append(out, '{'), member...), '}')
	}
	end := len(out) - 1
	for end > 0 && out[end] != '}' {
		end--
	}
	tail := len(out) > 1 && out[end-1] != '{'
	out = out[:end]
	if tail {
		out = append(out, ',')
	}
	out = append(out, member...)
	return append(out, '}')
}
