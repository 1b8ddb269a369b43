package policy

import (
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

// newDecisionMem allocates the memory of one decision and points d's
// slices at it (empty, with capacity). It returns the prompt to use if
// the decision asks, and room for the prompt's text (nil when there is
// none).
func newDecisionMem(d *Decision, traced, plugins bool) (*Prompt, []byte) {
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
	return &m.prompt, text
}

// joinPrompt builds a prompt's title and message as one string: in room
// (the decision's own memory, written once and never again) when they fit,
// else in one allocation of their exact size. The title names the tool
// (and its title, when it has a different one) and the server; the
// message is the reasons, joined by "; ".
func joinPrompt(room []byte, toolTitle, tool, server string, reasons []Reason) (title, message string) {
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
	if n <= cap(room) {
		b := room[:0]
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
