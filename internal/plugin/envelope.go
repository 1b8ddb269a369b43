package plugin

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// Input envelopes (pdk/ABI.md section 4) are written by appending to a
// per-instance buffer: no encoding/json, no reflection, no allocation once
// the buffer has grown. The parts that never change for a loaded plugin
// (abi, event, plugin name and config) are rendered once at load.
//
// Key order: small keys that plugins read often come first and big ones
// last (arguments, result text, config), so a guest that scans lazily stops
// early. Guests must not depend on the order; it only saves them time,
// which matters because every loop iteration of a guest pays for the
// deadline check (docs/plugins.md).

const (
	// maxInput caps an input envelope.
	maxInput = 1 << 20
	// maxResultText caps observe's result.text.
	maxResultText = 16 << 10
)

// head renders `{"abi":1,"event":"<ev>"`.
func head(ev Event) []byte {
	return []byte(`{"abi":1,"event":"` + ev.String() + `"`)
}

// tail renders `,"plugin":{"name":..,"config":..}}`, closing the envelope.
func tail(name string, config []byte) []byte {
	b := []byte(`,"plugin":{"name":`)
	b = appendString(b, name)
	b = append(b, `,"config":`...)
	b = append(b, config...)
	return append(b, "}}"...)
}

func (in *instance) appendCheck(b []byte, c *policy.CheckInput) []byte {
	n := in.p.needs()
	b = append(b, in.p.head[EventCheck]...)
	b = in.appendSession(b, c.Session, c.Labels)
	if n.has(needServerContext) {
		b = appendServerContext(b, c.Context)
	}
	b = in.appendCall(b, c.Server, c.App, c.Connector, c.Tool, c.Arguments, c.ArgumentsChecked, &c.Hints, c.Caps)
	if n.has(needBaseline) {
		b = append(b, `,"baseline":{"decision":`...)
		b = appendString(b, c.Baseline.String())
		b = append(b, `,"mode":`...)
		mode := string(c.Mode)
		if mode == "" {
			mode = "auto"
		}
		b = appendString(b, mode)
		b = append(b, `,"rememberable":`...)
		b = strconv.AppendBool(b, c.Rememberable)
		b = append(b, '}')
	}
	if n.has(needTime) {
		b = in.appendTime(b)
	}
	return append(b, in.p.closing()...)
}

func (in *instance) appendObserve(b []byte, o *policy.ObserveInput) []byte {
	n := in.p.needs()
	b = append(b, in.p.head[EventObserve]...)
	b = in.appendSession(b, o.Session, o.Labels)
	if n.has(needServerContext) {
		b = appendServerContext(b, o.Context)
	}
	b = in.appendCall(b, o.Server, o.App, o.Connector, o.Tool, o.Arguments, false, &o.Hints, o.Caps)
	if n.has(needResult) {
		b = in.appendResult(b, o)
	}
	if n.has(needTime) {
		b = in.appendTime(b)
	}
	return append(b, in.p.closing()...)
}

// appendResult writes observe's `,"result":{...}`.
func (in *instance) appendResult(b []byte, o *policy.ObserveInput) []byte {
	b = append(b, `,"result":{"is_error":`...)
	b = strconv.AppendBool(b, o.IsError)
	b = append(b, `,"text":`...)
	text, limit := o.Result, maxResultText
	if in.p.resultLimit > 0 {
		text, limit = o.ResultFull, in.p.resultLimit
		if text == "" {
			text = o.Result
		}
	}
	// The whole envelope must fit the input cap: escaping can make text
	// grow (a control byte is six), so a long text is cut until it fits.
	room := maxInput - len(b) - len(in.p.closing()) - 128
	for {
		text = cutText(text, limit)
		at := len(b)
		b = appendString(b, text)
		if len(b)-at <= room || limit == 0 {
			break
		}
		b, limit = b[:at], limit/2
	}
	return append(b, '}')
}

// cutText cuts s to at most n bytes, on a rune boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (in *instance) appendList(b []byte, l *policy.ListInput) []byte {
	n := in.p.needs()
	b = append(b, in.p.head[EventList]...)
	b = in.appendSession(b, l.Session, l.Labels)
	if n.has(needServer) {
		b = append(b, `,"server":`...)
		b = appendString(b, l.Server)
	}
	if n.has(needApp) {
		b = append(b, `,"app":`...)
		b = appendString(b, l.App)
	}
	b = append(b, `,"tools":[`...)
	for i, t := range l.Tools {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, t.Name)
		if n.has(needTool) {
			b = append(b, `,"title":`...)
			b = appendString(b, t.Title)
			b = append(b, `,"definition_hash":`...)
			b = appendString(b, t.HashHex)
		}
		if n.has(needHints) {
			// Effective hints first (what a check will see), then declared.
			b = append(b, `,"hints":`...)
			if i < len(l.Hints) {
				b = appendHints(b, &l.Hints[i])
			} else {
				b = append(b, `{}`...)
			}
			b = append(b, `,"declared_hints":`...)
			b = appendHints(b, &t.Declared)
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if n.has(needTime) {
		b = in.appendTime(b)
	}
	return append(b, in.p.closing()...)
}

// appendSession writes `,"session":{...}` with the parts the plugin needs,
// then a stateful plugin's state (guest_state.go), which does not depend on needs.
func (in *instance) appendSession(b []byte, id string, labels []string) []byte {
	n := in.p.needs()
	if n.has(needSession) {
		b = append(b, `,"session":{`...)
		if n.has(needSessionID) {
			b = append(b, `"id":`...)
			b = appendString(b, id)
			if n.has(needLabels) {
				b = append(b, ',')
			}
		}
		if n.has(needLabels) {
			b = in.appendLabels(b, labels)
		}
		b = append(b, '}')
	}
	if in.state != nil {
		b = appendState(b, *in.state)
	}
	return b
}

// appendLabels writes `"labels":[...]`, sorted and without duplicates as
// the ABI promises, using scratch space so that the caller's slice is left
// alone.
func (in *instance) appendLabels(b []byte, labels []string) []byte {
	// A session's labels rarely change between its calls: reuse the last
	// rendering when the caller's labels are the same strings.
	if m := &in.labelMemo; m.valid && slices.Equal(m.labels, labels) {
		return append(b, m.bytes...)
	}
	at := len(b)
	b = in.renderLabels(b, labels)
	m := &in.labelMemo
	if len(labels) <= maxMemoLabels {
		m.labels = append(m.labels[:0], labels...)
		m.bytes = append(m.bytes[:0], b[at:]...)
		m.valid = true
	} else {
		clear(m.labels)
		m.valid = false
	}
	return b
}

// maxMemoLabels bounds the labels an instance remembers.
const maxMemoLabels = 64

// labelMemo is the last labels an instance rendered.
type labelMemo struct {
	valid  bool
	labels []string
	bytes  []byte
}

func (in *instance) renderLabels(b []byte, labels []string) []byte {
	b = append(b, `"labels":[`...)
	in.labels = append(in.labels[:0], labels...)
	if !slices.IsSorted(in.labels) {
		slices.Sort(in.labels)
	}
	prev := ""
	n := 0
	for i, l := range in.labels {
		if i > 0 && l == prev {
			continue
		}
		prev = l
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendString(b, l)
	}
	clear(in.labels) // do not keep the caller's strings alive
	return append(b, ']')
}

// appendCall writes `,"call":{...}` with the parts the plugin needs: the
// definition's parts from the instance's rendered copy (callblock.go), the
// arguments from the call.
//
// checked says the pipeline validated args already (CheckInput.ArgumentsChecked);
// otherwise invalid JSON becomes null, so that the envelope stays JSON.
func (in *instance) appendCall(b []byte, server, app, connector string, tool *hints.Tool, args []byte, checked bool, h *hints.Set, caps hints.Capabilities) []byte {
	n := in.p.needs()
	if !n.has(needCallParts) {
		return b
	}
	b = append(b, `,"call":{`...)
	if n.has(needDefinition) {
		b = in.callDefinition(b, server, app, connector, tool, h, caps)
		if n.has(needArguments) {
			b = append(b, ',')
		}
	}
	if n.has(needArguments) {
		b = append(b, `"arguments":`...)
		switch {
		case len(args) == 0:
			b = append(b, `{}`...)
		case checked || validJSON(args):
			b = append(b, args...)
		default:
			b = append(b, `null`...)
		}
	}
	return append(b, '}')
}

// appendDefinition renders the call's parts that depend only on the tool's
// definition and the policy, comma-separated, without braces.
func appendDefinition(b []byte, n needs, server, app, connector string, tool *hints.Tool, h *hints.Set, caps hints.Capabilities) []byte {
	sep := false
	key := func(k string) {
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = append(b, k...)
	}
	if n.has(needCapabilities) {
		key(`"capabilities":{"reads_private_data":`)
		b = strconv.AppendBool(b, caps.ReadsPrivateData)
		b = append(b, `,"sees_untrusted_content":`...)
		b = strconv.AppendBool(b, caps.SeesUntrustedContent)
		b = append(b, `,"can_exfiltrate":`...)
		b = strconv.AppendBool(b, caps.CanExfiltrate)
		b = append(b, '}')
	}
	if n.has(needHints) {
		key(`"hints":`)
		b = appendHints(b, h)
	}
	if n.has(needServer) {
		key(`"server":`)
		b = appendString(b, server)
	}
	if n.has(needApp) {
		key(`"app":`)
		b = appendString(b, app)
	}
	if n.has(needConnector) {
		key(`"connector":`)
		b = appendString(b, connector)
	}
	if n.has(needTool) {
		key(`"tool":{"name":`)
		var name, title, hash string
		if tool != nil {
			name, title, hash = tool.Name, tool.Title, tool.HashHex
		}
		b = appendString(b, name)
		b = append(b, `,"title":`...)
		b = appendString(b, title)
		b = append(b, `,"definition_hash":`...)
		b = appendString(b, hash)
		b = append(b, '}')
	}
	return b
}

func appendHints(b []byte, s *hints.Set) []byte {
	b = append(b, '{')
	first := true
	for h := hints.Hint(0); h < hints.Count; h++ {
		v := s[h]
		if v == hints.Unset {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, h.Name()...)
		b = append(b, `":`...)
		b = strconv.AppendBool(b, v == hints.True)
	}
	return append(b, '}')
}

// appendTime writes `,"time":"<RFC 3339 UTC>"`, formatting at most once a
// second per instance.
func (in *instance) appendTime(b []byte) []byte {
	now := in.p.rt.opts.Now()
	if sec := now.Unix(); sec != in.timeSec || in.timeBuf == nil {
		in.timeSec = sec
		in.timeBuf = now.UTC().AppendFormat(in.timeBuf[:0], `"2006-01-02T15:04:05Z07:00"`)
	}
	b = append(b, `,"time":`...)
	return append(b, in.timeBuf...)
}

const hexDigits = "0123456789abcdef"

// plainByte marks the bytes a JSON string carries as they are: printable
// ASCII but the quote and the backslash (one table lookup per byte).
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD, so
// the envelope is always valid JSON whatever a server or client sent.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainByte[c] {
			i++
			continue
		}
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
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
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
