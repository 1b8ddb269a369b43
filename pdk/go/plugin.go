package pdk

import (
	"errors"
	"unicode/utf8"
)

// Return codes of toolwarden_handle (pdk/ABI.md section 3.1).
const (
	CodeOK         = 0
	CodeNotHandled = 1
	CodeBadInput   = 2
	CodeInternal   = 3
	CodeBadConfig  = 4
)

// Events, as numbered by the ABI.
const (
	EventDescribe = 0
	EventList     = 1
	EventCheck    = 2
	EventObserve  = 3
)

// Decision is a plugin's answer to a check.
type Decision uint8

const (
	Abstain Decision = iota
	Allow
	Ask
	Deny
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return "abstain"
}

// Verdict is the output of a check.
type Verdict struct {
	Decision Decision
	// Code is a stable machine code, [a-z0-9_.:-]{1,64}; empty means "plugin".
	Code string
	// Reason is shown to the human.
	Reason string
	// Remember: may an approval of this ask be remembered for the session?
	// The host remembers per tool, not per argument, so leave it false when
	// asking because of arguments, and propose Scopes instead.
	Remember bool
	// Labels are session labels to add.
	Labels []string
	// Arguments name the arguments the verdict is about, as top-level names
	// ("path") or JSON pointers ("/options/url"): at most 16, each at most
	// 256 bytes. Prompts show them first, and a prompt that cannot show one
	// in full does not offer to remember the approval.
	Arguments []string
	// Scopes propose what an approval of an ask that is not remembered
	// may be remembered for: one per argument in Arguments, at most 4
	// (scope.go; pdk/ABI.md 5.2).
	Scopes []Scope

	state []stateOp // session state changes (state.go)
}

// About returns v naming the arguments it is about (see Verdict.Arguments).
func (v Verdict) About(args ...string) Verdict {
	v.Arguments = append(v.Arguments[:len(v.Arguments):len(v.Arguments)], args...)
	return v
}

// AllowBecause, AskBecause and DenyBecause build verdicts.
func AllowBecause(code, reason string) Verdict {
	return Verdict{Decision: Allow, Code: code, Reason: reason}
}
func AskBecause(code, reason string) Verdict {
	return Verdict{Decision: Ask, Code: code, Reason: reason}
}
func DenyBecause(code, reason string) Verdict {
	return Verdict{Decision: Deny, Code: code, Reason: reason}
}

// NoOpinion is the abstain verdict.
func NoOpinion() Verdict { return Verdict{} }

// Plugin is a plugin's name, version and handlers. Leave a handler nil for
// an event the plugin does not handle; describe is answered for you.
type Plugin struct {
	Name    string
	Version string
	// Configure, if set, is called once per instance, before its first
	// event, with the policy's config (a private copy, valid forever). The
	// host gives an instance one config for its whole life. An error
	// refuses the plugin at load (describe) with the error's text.
	Configure func(config Value) error
	Check     func(*Check) Verdict
	// Observe returns session labels to add.
	Observe func(*Observe) []string
	// List returns the names of tools to hide.
	List func(*List) []string
	// State asks the host for per-session state (state.go).
	State bool
	// Data, if set, is called once per instance, before its first check,
	// observe or list, with the policy's data file (JSON; null when the
	// policy has none). An error fails the instance (data.go).
	Data func(data Value) error
	// Needs, if set, names the parts of the input the plugin reads
	// (pdk/ABI.md section 14: "labels", "capabilities", "tool",
	// "arguments", ...); the host then sends only those. Nil means
	// everything. Leave "config" out when only Configure reads it: the kit
	// then asks for init, so every instance gets its config once (needs.go).
	Needs []string
	// Deterministic promises that Check's verdict depends on nothing but
	// its input (pdk/ABI.md section 15): no counters, clocks or randomness.
	// The host may then answer an input identical to the last one without
	// calling the plugin.
	Deterministic bool

	configured bool
	configErr  error
	out        []byte
	// Per-event state, reused: an event allocates nothing of its own.
	env     envelope
	check   Check
	observe Observe
	list    List
}

// Error is a panic value that fails an event with a specific ABI code; its
// text goes to the host.
type Error struct {
	Code uint32
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

// Fail aborts the current event with an ABI code and message. Call it from
// a handler.
func Fail(code uint32, msg string) { panic(&Error{Code: code, Msg: msg}) }

var registered *Plugin

// Register makes p the plugin this module serves. Call it from init in
// package main; main is never run in a reactor.
func Register(p *Plugin) {
	if registered != nil {
		panic("pdk: Register called twice")
	}
	registered = p
}

// Handle runs one event and returns the ABI code and the output bytes (valid
// until the next call). The wasm export calls it; tests call it natively.
func (p *Plugin) Handle(event uint32, in []byte) (code uint32, out []byte) {
	defer func() {
		if r := recover(); r != nil {
			code, out = CodeInternal, append(p.out[:0], "panic: "...)
			switch e := r.(type) {
			case *Error:
				code, out = e.Code, append(p.out[:0], e.Msg...)
			case error:
				out = append(out, e.Error()...)
			case string:
				out = append(out, e...)
			default:
				out = append(out, "(non-error value)"...)
			}
			p.out = out
		}
	}()
	out = p.out[:0]
	root, ok := input(in)
	if !ok {
		return CodeBadInput, append(out, "input is not a JSON object"...)
	}
	e := &p.env
	e.reset(root)
	p.beginState()
	if !p.configured {
		p.configure(e.get("plugin").Get("config"))
	}
	if p.configErr != nil {
		return CodeBadConfig, append(out, p.configErr.Error()...)
	}
	switch event {
	case EventDescribe:
		out = p.appendDescribe(out)
	case EventCheck:
		if p.Check == nil {
			return CodeNotHandled, out
		}
		p.check.envelope = e
		v := p.Check(&p.check)
		e.state.takeVerdict(&v)
		out = appendVerdict(out, &v)
	case EventInit:
		return p.init(e, out)
	case EventObserve:
		if p.Observe == nil {
			return CodeNotHandled, out
		}
		p.observe.envelope = e
		out = appendList(out, "labels", p.Observe(&p.observe))
	case EventList:
		if p.List == nil {
			return CodeNotHandled, out
		}
		p.list.envelope = e
		out = appendList(out, "hide", p.List(&p.list))
	default:
		return CodeNotHandled, out
	}
	out = p.withState(event, out)
	p.out = out
	return CodeOK, out
}

func (p *Plugin) configure(cfg Value) {
	p.configured = true
	raw := cfg.Raw()
	if cfg.Exists() && raw == nil {
		p.configErr = errors.New("config is not valid JSON")
		return
	}
	if raw == nil {
		raw = []byte(`{}`)
	}
	if p.Configure != nil {
		p.configErr = p.Configure(Value{b: append([]byte(nil), raw...)})
	}
}

func (p *Plugin) appendDescribe(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, p.Name)
	b = append(b, `,"version":`...)
	b = appendString(b, p.Version)
	b = append(b, `,"events":[`...)
	n := 0
	for _, e := range [...]struct {
		name string
		on   bool
	}{{"list", p.List != nil}, {"check", p.Check != nil}, {"observe", p.Observe != nil}, {"init", p.wantsInit()}} {
		if !e.on {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendString(b, e.name)
	}
	b = append(b, ']')
	if p.Needs != nil {
		b = append(b, `,"needs":`...)
		b = appendStrings(b, p.Needs)
	}
	if p.Deterministic {
		b = append(b, `,"deterministic":true`...)
	}
	return append(b, '}')
}

func appendVerdict(b []byte, v *Verdict) []byte {
	b = append(b, `{"decision":"`...)
	b = append(b, v.Decision.String()...)
	b = append(b, '"')
	if v.Code != "" {
		b = append(b, `,"code":`...)
		b = appendString(b, v.Code)
	}
	if v.Reason != "" {
		b = append(b, `,"reason":`...)
		b = appendString(b, v.Reason)
	}
	if v.Remember {
		b = append(b, `,"remember":true`...)
	}
	if len(v.Labels) > 0 {
		b = append(b, `,"labels":`...)
		b = appendStrings(b, v.Labels)
	}
	if len(v.Arguments) > 0 {
		b = append(b, `,"arguments":`...)
		b = appendStrings(b, v.Arguments)
	}
	if len(v.Scopes) > 0 {
		b = appendScopes(b, v.Scopes) // scope.go
	}
	return append(b, '}')
}

func appendList(b []byte, key string, list []string) []byte {
	if len(list) == 0 {
		return b // empty output: no opinion
	}
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = appendStrings(b, list)
	return append(b, '}')
}

func appendStrings(b []byte, list []string) []byte {
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

const hexDigits = "0123456789abcdef"

func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight plain bytes per iteration (no quote, backslash, control
		// or non-ASCII byte): loops are what a guest pays for.
		if i+8 <= len(s) {
			if x := load64s(s, i); specialMask(x)|x&hi8 == 0 {
				i += 8
				continue
			}
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\t':
				b = append(b, '\\', 't')
			case '\r':
				b = append(b, '\\', 'r')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Errorf-free helpers for config errors, which keep fmt out of plugins.

// ConfigError builds a Configure error for a config path.
func ConfigError(path, msg string) error { return errors.New(path + ": " + msg) }

// Quote returns s as a double-quoted JSON string, for reasons such as
// `argument "path" = "/etc/passwd"`. It is cheaper in a guest than
// strconv.Quote, which makes a call per rune.
func Quote(s string) string { return string(appendString(make([]byte, 0, len(s)+2), s)) }
