package policy

import (
	"slices"
	"strings"
	"unsafe"
)

// A decision's slices (trace, reasons, the plugin asks step 6 reads) and
// its prompt come from one allocation made when Decide starts, instead of
// one allocation each: every decision pays the allocator once, and the
// garbage collector, whose work grows with the bytes allocated, runs less
// often on a host deciding from several cores. The memory belongs to the
// returned Decision alone: it is never pooled nor handed to another call,
// so a caller may keep or modify what Decide returned.
//
// The arrays are sized for the common case, so that each kind of decision
// fits a small size class: every step of a decision without plugins, two
// plugins' steps, two reasons, one plugin ask that forbids remembering.
// append past them moves to a new array as usual. A traced decision
// without plugins also has room for its prompt's text, in what would
// otherwise be the unused tail of its size class (896 bytes, with the
// 8-byte header the allocator adds to objects this size that hold
// pointers). A longer text, and the text of a decision with plugins (their
// messages are longer than the 24 bytes its 1024-byte class leaves), is
// allocated on its own.
//
// DecideInto instead reuses the memory a Decision was given by an earlier
// DecideInto (reusedMem): a caller that decides call after call into one
// Decision allocates nothing once that memory has grown to what its
// decisions need. The prompt's text is then written again in place, so
// its strings change with the next decision into the same Decision; that
// is the contract of DecideInto, and Clone is how a caller keeps one.

const (
	// traceSteps: hints, capabilities, visibility, approval mode,
	// remembered, approval policy, the decision.
	traceSteps = 7
	// tracePluginSteps: the same and two plugins, but for remembered (a
	// decision of two plugins that is lifted by a remembered approval
	// grows its trace once; one more step would take every decision
	// with plugins to the next size class).
	tracePluginSteps = traceSteps - 1 + 2
)

// decisionMem is what every decision may need.
type decisionMem struct {
	reasons [2]Reason
	prompt  Prompt
}

// tracedMem adds the trace's steps.
type tracedMem struct {
	decisionMem
	steps [traceSteps]Step
	text  [72]byte
}

// pluginsMem adds room for a plugin ask that forbids remembering.
type pluginsMem struct {
	decisionMem
	asks [1]scopedAsk
}

// tracedPluginsMem is both, with room for two plugins' steps.
type tracedPluginsMem struct {
	decisionMem
	steps [tracePluginSteps]Step
	asks  [1]scopedAsk
}

// reusedPromptText is the room for a prompt's text a reused Decision
// starts with: a title and two or three reasons.
const reusedPromptText = 256

// reusedMem is the memory of a Decision that DecideInto reuses. The slices
// are what its decisions use: the arrays here at first, and a larger
// array instead once a decision outgrew one (more plugins' steps, a longer
// prompt), so that the next decision starts with the room the last one
// needed.
type reusedMem struct {
	// owner is the address of the Decision this memory belongs to. A
	// copy of that Decision (another address) carries the memory along
	// but never decides into it: its first DecideInto gives it memory of
	// its own, so that copies handed to other goroutines never write one
	// memory at once. An address, not a pointer, so that a Decision on
	// its caller's stack stays there; if the stack moves, the Decision
	// just gets new memory once.
	owner uintptr

	trace   []Step
	reasons []Reason
	asks    []scopedAsk
	text    []byte
	prompt  Prompt

	steps     [tracePluginSteps]Step
	reasonArr [2]Reason
	askArr    [1]scopedAsk
	textArr   [reusedPromptText]byte
}

// promptRoom is where a prompt's text is built: buf, in the decision's
// own memory (nil when there is none), and for a reused decision where a
// larger buf is kept when the text outgrows it.
type promptRoom struct {
	buf  []byte
	grow *[]byte
}

// reuseDecisionMem is newDecisionMem for DecideInto: it resets d to the
// zero Decision, keeping the memory its earlier decisions used (or giving
// it some, the first time), and points d's slices at it.
func reuseDecisionMem(d *Decision, traced, plugins bool) (*Prompt, promptRoom) {
	m := d.mem
	if self := uintptr(unsafe.Pointer(d)); m == nil || m.owner != self {
		m = &reusedMem{owner: self}
		m.trace, m.reasons, m.asks, m.text = m.steps[:0], m.reasonArr[:0], m.askArr[:0], m.textArr[:0]
	} else {
		// Keep the arrays the last decision grew into.
		if cap(d.Trace) > cap(m.trace) {
			m.trace = d.Trace[:0]
		}
		if cap(d.Reasons) > cap(m.reasons) {
			m.reasons = d.Reasons[:0]
		}
		if cap(d.unremembered) > cap(m.asks) {
			m.asks = d.unremembered[:0]
		}
		// What the last decision left there is not kept alive by it.
		clear(m.trace[:cap(m.trace)])
		clear(m.reasons[:cap(m.reasons)])
		clear(m.asks[:cap(m.asks)])
	}
	*d = Decision{mem: m, Reasons: m.reasons[:0]}
	if traced {
		d.Trace = m.trace[:0]
	}
	if plugins {
		d.unremembered = m.asks[:0]
	}
	return &m.prompt, promptRoom{buf: m.text[:0], grow: &m.text}
}

// Clone returns a copy of d that shares no memory with it: its slices, its
// prompt and the prompt's text are its own. A caller of DecideInto (or
// host.CheckInto) clones what it keeps of a decision past the next
// decision into the same Decision.
func (d *Decision) Clone() Decision {
	c := *d
	c.mem = nil
	c.Reasons = slices.Clone(d.Reasons)
	c.Trace = slices.Clone(d.Trace)
	c.Labels = slices.Clone(d.Labels)
	c.Flagged = slices.Clone(d.Flagged)
	c.Scopes = slices.Clone(d.Scopes)
	c.unremembered = slices.Clone(d.unremembered)
	if d.Prompt != nil {
		p := *d.Prompt
		p.Title, p.Message = strings.Clone(p.Title), strings.Clone(p.Message)
		p.Options = slices.Clone(p.Options)
		c.Prompt = &p
	}
	return c
}

// newDecisionMem allocates the memory of one decision and points d's
// slices at it (empty, with capacity). It returns the prompt to use if
// the decision asks, and room for the prompt's text (none when there is
// none).
func newDecisionMem(d *Decision, traced, plugins bool) (*Prompt, promptRoom) {
	var m *decisionMem
	var text []byte
	switch {
	case traced && plugins:
		t := new(tracedPluginsMem)
		d.Trace, d.unremembered, m = t.steps[:0], t.asks[:0], &t.decisionMem
	case traced:
		t := new(tracedMem)
		d.Trace, m, text = t.steps[:0], &t.decisionMem, t.text[:0]
	case plugins:
		t := new(pluginsMem)
		d.unremembered, m = t.asks[:0], &t.decisionMem
	default:
		m = new(decisionMem)
	}
	d.Reasons = m.reasons[:0]
	return &m.prompt, promptRoom{buf: text}
}

// joinPrompt builds a prompt's title and message as one string: in room
// (the decision's own memory) when they fit, or in a larger room kept for
// the next decision into a reused Decision, else in one allocation of
// their exact size. A fresh decision's room is written once and never
// again; a reused one's is written again by the next decision. The title names the tool
// (and its title, when it has a different one) and the server; the
// message is the reasons, joined by "; ".
func joinPrompt(room promptRoom, toolTitle, tool, server string, reasons []Reason) (title, message string) {
	const allow, on, q, sep = "Allow ", " on ", "?", "; "
	n := len(allow) + len(tool) + len(on) + len(server) + len(q)
	named := toolTitle != "" && toolTitle != tool
	if named {
		n += len(toolTitle) + len(" (") + len(")")
	}
	titleLen := n
	for i := range reasons {
		if i > 0 {
			n += len(sep)
		}
		n += len(reasons[i].Message)
	}
	if n > cap(room.buf) && room.grow != nil {
		*room.grow = make([]byte, 0, n+n/2)
		room.buf = *room.grow
	}
	if n <= cap(room.buf) {
		b := room.buf[:0]
		b = append(b, allow...)
		if named {
			b = append(b, toolTitle...)
			b = append(b, " ("...)
			b = append(b, tool...)
			b = append(b, ')')
		} else {
			b = append(b, tool...)
		}
		b = append(b, on...)
		b = append(b, server...)
		b = append(b, q...)
		for i := range reasons {
			if i > 0 {
				b = append(b, sep...)
			}
			b = append(b, reasons[i].Message...)
		}
		s := unsafe.String(unsafe.SliceData(b), len(b))
		return s[:titleLen], s[titleLen:]
	}
	var b strings.Builder
	b.Grow(n) // exactly n bytes: the one allocation
	b.WriteString(allow)
	if named {
		b.WriteString(toolTitle)
		b.WriteString(" (")
		b.WriteString(tool)
		b.WriteByte(')')
	} else {
		b.WriteString(tool)
	}
	b.WriteString(on)
	b.WriteString(server)
	b.WriteString(q)
	for i := range reasons {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(reasons[i].Message)
	}
	s := b.String()
	return s[:titleLen], s[titleLen:]
}
