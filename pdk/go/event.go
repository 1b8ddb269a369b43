package pdk

// The events a plugin handles, read lazily from the input envelopes of
// pdk/ABI.md section 4: each accessor scans the input only as far as it
// needs. The host writes small, often-read keys first (session, then the
// call's capabilities and hints) and big ones last (arguments, config), so
// a plugin that decides from capabilities never scans the arguments. Key
// order is never relied on for correctness, only for speed.

// envelope is the input of one event.
type envelope struct {
	in      Value
	session Value
	call    Value
}

func (e *envelope) get(key string) Value { return e.in.Get(key) }

// Session is the agent conversation an event belongs to.
func (e *envelope) Session() Session {
	if !e.session.Exists() {
		e.session = e.get("session")
	}
	return Session{e.session}
}

// Time is the host's wall clock (RFC 3339, UTC). Guests have no real clock.
func (e *envelope) Time() string { return e.get("time").String() }

// Policy is the [policies.<name>] key the user gave this plugin.
func (e *envelope) Policy() string { return e.get("plugin").Get("name").String() }

// Raw is the whole input envelope.
func (e *envelope) Raw() Value { return e.in }

func (e *envelope) callValue() Call {
	if !e.call.Exists() {
		e.call = e.get("call")
	}
	return Call{e.call}
}

// Session is the agent conversation an event belongs to.
type Session struct{ v Value }

// ID is the session id ("" when the host has none).
func (s Session) ID() string { return s.v.Get("id").String() }

// Labels is the array of session labels (sorted, no duplicates).
func (s Session) Labels() Value { return s.v.Get("labels") }

// HasLabel reports whether the session carries a label.
func (s Session) HasLabel(label string) bool {
	it := s.Labels().array()
	for it.next() {
		if it.val.StrEquals(label) {
			return true
		}
	}
	return false
}

// Call is one tool call.
type Call struct{ v Value }

func (c Call) Server() string    { return c.v.Get("server").String() }
func (c Call) App() string       { return c.v.Get("app").String() }
func (c Call) Connector() string { return c.v.Get("connector").String() }

// Tool identifies the tool called.
func (c Call) Tool() Tool { return parseTool(c.v.Get("tool")) }

// ToolName is Tool().Name without reading the rest.
func (c Call) ToolName() string { return c.v.Get("tool").Get("name").String() }

// Arguments are the call's arguments as the client sent them.
func (c Call) Arguments() Value { return c.v.Get("arguments") }

// Hints are the effective hints (after trust and config overrides).
func (c Call) Hints() Hints { return Hints{c.v.Get("hints")} }

// Capabilities are the lethal-trifecta legs of the tool.
func (c Call) Capabilities() Capabilities {
	var caps Capabilities
	it := c.v.Get("capabilities").object()
	for it.next() {
		switch string(it.key) {
		case "reads_private_data":
			caps.ReadsPrivateData = it.val.True()
		case "sees_untrusted_content":
			caps.SeesUntrustedContent = it.val.True()
		case "can_exfiltrate":
			caps.CanExfiltrate = it.val.True()
		}
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
	it := v.object()
	for it.next() {
		switch string(it.key) {
		case "name":
			t.Name = it.val.String()
		case "title":
			t.Title = it.val.String()
		case "definition_hash":
			t.DefinitionHash = it.val.String()
		}
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
type Check struct{ envelope }

// Call is the call about to run.
func (c *Check) Call() Call { return c.callValue() }

// Baseline is the host's decision before plugins.
func (c *Check) Baseline() Baseline {
	var b Baseline
	it := c.get("baseline").object()
	for it.next() {
		switch string(it.key) {
		case "decision":
			b.Decision = it.val.String()
		case "mode":
			b.Mode = it.val.String()
		case "rememberable":
			b.Rememberable = it.val.True()
		}
	}
	return b
}

// Observe is the observe event: a tool call that ran.
type Observe struct{ envelope }

// Call is the call that ran.
func (o *Observe) Call() Call { return o.callValue() }

// Result summarises what the tool returned.
func (o *Observe) Result() Result {
	var r Result
	it := o.get("result").object()
	for it.next() {
		switch string(it.key) {
		case "is_error":
			r.IsError = it.val.True()
		case "text":
			r.Text = it.val.String()
		}
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
type List struct{ envelope }

func (l *List) Server() string { return l.get("server").String() }
func (l *List) App() string    { return l.get("app").String() }

// Tools calls fn for each listed tool until fn returns false.
func (l *List) Tools(fn func(t ListTool) bool) {
	it := l.get("tools").array()
	for it.next() {
		if !fn(ListTool{Tool: parseTool(it.val), DeclaredHints: Hints{it.val.Get("declared_hints")}}) {
			return
		}
	}
}

// ListTool is one tool of a list event.
type ListTool struct {
	Tool
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
