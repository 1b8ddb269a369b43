package pdk

// The events a plugin handles, read lazily from the input envelopes of
// pdk/ABI.md section 4: each accessor scans the input only as far as it
// needs. The host writes small, often-read keys first (session, then the
// call's capabilities and hints) and big ones last (arguments, config), so
// a plugin that decides from capabilities never scans the arguments. Key
// order is never relied on for correctness, only for speed.

// envelope is the input of one event, with what its accessors have found
// so far: the members of the top-level object and of "call" (each scanned
// once, as far as needed) and the session's labels. It belongs to the
// Plugin and is reset for each event.
type envelope struct {
	in      Value
	root    object
	call    object
	callOK  bool
	session Value
	labels  Value
	sessOK  bool
	labOK   bool
	state   State // session state and its changes (state.go)
}

func (e *envelope) reset(in Value) {
	// Field by field: zeroing the whole struct (its caches) would cost a
	// guest more than most events.
	e.in = in
	e.root.reset(in)
	e.callOK, e.sessOK, e.labOK = false, false, false
}

func (e *envelope) get(key string) Value {
	if e == nil {
		return Value{}
	}
	return e.root.get(key)
}

func (e *envelope) sessionValue() Value {
	if !e.sessOK {
		e.session, e.sessOK = e.get("session"), true
	}
	return e.session
}

func (e *envelope) callObject() *object {
	if !e.callOK {
		e.call.reset(e.get("call"))
		e.callOK = true
	}
	return &e.call
}

// Session is the agent conversation an event belongs to.
func (e *envelope) Session() Session { return Session{e} }

// Time is the host's wall clock (RFC 3339, UTC). Guests have no real clock.
func (e *envelope) Time() string { return e.get("time").String() }

// Policy is the [policies.<name>] key the user gave this plugin.
func (e *envelope) Policy() string { return e.get("plugin").Get("name").String() }

// Raw is the whole input envelope.
func (e *envelope) Raw() Value {
	if e == nil {
		return Value{}
	}
	return e.in
}

// Session is the agent conversation an event belongs to.
type Session struct{ e *envelope }

func (s Session) value() Value {
	if s.e == nil {
		return Value{}
	}
	return s.e.sessionValue()
}

// ID is the session id ("" when the host has none).
func (s Session) ID() string { return s.value().Get("id").String() }

// Labels is the array of session labels (sorted, no duplicates).
func (s Session) Labels() Value {
	e := s.e
	if e == nil {
		return Value{}
	}
	if !e.labOK {
		e.labels, e.labOK = e.sessionValue().Get("labels"), true
	}
	return e.labels
}

// HasLabel reports whether the session carries a label.
func (s Session) HasLabel(label string) bool { return s.Labels().HasString(label) }

// Call is one tool call.
type Call struct{ e *envelope }

func (c Call) get(key string) Value {
	if c.e == nil {
		return Value{}
	}
	return c.e.callObject().get(key)
}

// Get returns a member of the call object as a Value: for keys without an
// accessor here, and for reading a member without allocating a string.
func (c Call) Get(key string) Value { return c.get(key) }

func (c Call) Server() string    { return c.get("server").String() }
func (c Call) App() string       { return c.get("app").String() }
func (c Call) Connector() string { return c.get("connector").String() }

// Tool identifies the tool called.
func (c Call) Tool() Tool { return parseTool(c.get("tool")) }

// ToolName is Tool().Name without reading the rest.
func (c Call) ToolName() string { return c.get("tool").Get("name").String() }

// Arguments are the call's arguments as the client sent them.
func (c Call) Arguments() Value { return c.get("arguments") }

// Hints are the effective hints (after trust and config overrides).
func (c Call) Hints() Hints { return Hints{c.get("hints")} }

// Capabilities are the lethal-trifecta legs of the tool.
func (c Call) Capabilities() Capabilities {
	var caps Capabilities
	b := c.get("capabilities").b
	for i := first(b, '{'); i >= 0; {
		k0, k1, esc, val := key(b, i)
		if val < 0 {
			break
		}
		k, t := b[k0:k1], b[val] == 't'
		switch {
		case named(k, esc, "reads_private_data"):
			caps.ReadsPrivateData = t
		case named(k, esc, "sees_untrusted_content"):
			caps.SeesUntrustedContent = t
		case named(k, esc, "can_exfiltrate"):
			caps.CanExfiltrate = t
		}
		i = skip(b, val)
	}
	return caps
}

// Tool identifies a tool.
type Tool struct {
	Name           string
	Title          string
	DefinitionHash string
}

func parseTool(v Value) Tool {
	var t Tool
	b := v.b
	for i := first(b, '{'); i >= 0; {
		k0, k1, esc, val := key(b, i)
		if val < 0 {
			break
		}
		k := b[k0:k1]
		switch v := (Value{b: b[val:]}); {
		case named(k, esc, "name"):
			t.Name = v.String()
		case named(k, esc, "title"):
			t.Title = v.String()
		case named(k, esc, "definition_hash"):
			t.DefinitionHash = v.String()
		}
		i = skip(b, val)
	}
	return t
}

// Hints are tri-state tool hints: a key is absent when the hint is unset.
type Hints struct{ v Value }

// Get returns a hint's value and whether it is set.
func (h Hints) Get(name string) (value, set bool) { return h.v.Get(name).Bool() }

// Or returns a hint's value, or def when it is unset.
func (h Hints) Or(name string, def bool) bool {
	if v, ok := h.Get(name); ok {
		return v
	}
	return def
}

// Raw is the hints object.
func (h Hints) Raw() Value { return h.v }

// Capabilities are the lethal-trifecta legs of a tool, derived by the host
// from its effective hints.
type Capabilities struct {
	ReadsPrivateData     bool
	SeesUntrustedContent bool
	CanExfiltrate        bool
}

// Baseline is the host's decision before plugins ran.
type Baseline struct {
	Decision     string // "allow", "ask" or "deny"
	Mode         string // "auto", "prompt", "writes" or "approve"
	Rememberable bool
}

// Check is the check event: a tool call about to run.
type Check struct{ *envelope }

// Call is the call about to run.
func (c *Check) Call() Call { return Call{c.envelope} }

// Baseline is the host's decision before plugins.
func (c *Check) Baseline() Baseline {
	var bl Baseline
	b := c.get("baseline").b
	for i := first(b, '{'); i >= 0; {
		k0, k1, esc, val := key(b, i)
		if val < 0 {
			break
		}
		k := b[k0:k1]
		switch v := (Value{b: b[val:]}); {
		case named(k, esc, "decision"):
			bl.Decision = v.String()
		case named(k, esc, "mode"):
			bl.Mode = v.String()
		case named(k, esc, "rememberable"):
			bl.Rememberable = v.True()
		}
		i = skip(b, val)
	}
	return bl
}

// Observe is the observe event: a tool call that ran.
type Observe struct{ *envelope }

// Call is the call that ran.
func (o *Observe) Call() Call { return Call{o.envelope} }

// Result summarises what the tool returned.
func (o *Observe) Result() Result {
	var r Result
	b := o.get("result").b
	for i := first(b, '{'); i >= 0; {
		k0, k1, esc, val := key(b, i)
		if val < 0 {
			break
		}
		k := b[k0:k1]
		switch v := (Value{b: b[val:]}); {
		case named(k, esc, "is_error"):
			r.IsError = v.True()
		case named(k, esc, "text"):
			r.Text = v.String()
		}
		i = skip(b, val)
	}
	return r
}

// Result summarises what a tool returned.
type Result struct {
	IsError bool
	// Text is the result's text content, truncated by the host.
	Text string
}

// List is the list event: a server's tool list.
type List struct{ *envelope }

func (l *List) Server() string { return l.get("server").String() }
func (l *List) App() string    { return l.get("app").String() }

// Tools calls fn for each listed tool until fn returns false.
func (l *List) Tools(fn func(t ListTool) bool) {
	b := l.get("tools").b
	for j := first(b, '['); j >= 0; j = skip(b, j) {
		v := Value{b: b[j:]}
		if !fn(ListTool{Tool: parseTool(v), Hints: Hints{v.Get("hints")}, DeclaredHints: Hints{v.Get("declared_hints")}}) {
			return
		}
	}
}

// ListTool is one tool of a list event.
type ListTool struct {
	Tool
	// Hints are the effective hints (after trust, drift and config
	// overrides): the same hints a check of this tool sees in Call.Hints.
	// Hide by these.
	Hints Hints
	// DeclaredHints are the hints as the server declared them (untrusted).
	DeclaredHints Hints
}

// input wraps an input buffer as a Value, checking only that it starts an
// object; later reads check what they scan.
func input(b []byte) (Value, bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return Value{}, false
	}
	return Value{b: b[i:]}, true
}

// named reports whether a raw member name (between the quotes; esc when it
// holds escapes) decodes to name. The typed accessors above walk their
// objects with key and skip themselves rather than through a helper that
// takes a func: in a guest, a call per member costs (docs/performance.md,
// "Guest cost").
func named(raw []byte, esc bool, name string) bool {
	return (esc || len(raw) == len(name)) && is(raw, esc, name)
}

// object caches the members of one object as a forward scan finds them,
// so that reading several keys of an object scans it once, and only as
// far as the last key read.
type object struct {
	b    []byte
	n    int // members recorded in keys
	more int // the first unrecorded member; -1: none; -2: after keys[n-1]'s value
	keys [12]memberAt
}

type memberAt struct {
	k0, k1, val int
	escaped     bool
}

func (o *object) reset(v Value) {
	o.b, o.n, o.more = v.b, 0, first(v.b, '{')
}

// get returns the member name, or a missing Value.
func (o *object) get(name string) Value {
	b := o.b
	for i := 0; i < o.n; i++ {
		if m := &o.keys[i]; (m.escaped || m.k1-m.k0 == len(name)) && is(b[m.k0:m.k1], m.escaped, name) {
			return Value{b: b[m.val:]}
		}
	}
	if o.more == -2 {
		o.more = skip(b, o.keys[o.n-1].val)
	}
	// Past the cache's capacity, members are scanned again each time.
	for i := o.more; i >= 0; {
		k0, k1, esc, val := key(b, i)
		recording := i == o.more && o.n < len(o.keys)
		if val < 0 {
			if recording {
				o.more = -1
			}
			break
		}
		if recording {
			m := &o.keys[o.n]
			m.k0, m.k1, m.val, m.escaped = k0, k1, val, esc
			o.n++
			o.more = -2
		}
		if (esc || k1-k0 == len(name)) && is(b[k0:k1], esc, name) {
			return Value{b: b[val:]}
		}
		i = skip(b, val)
		if recording {
			o.more = i
		}
	}
	return Value{}
}
