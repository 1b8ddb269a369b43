package hints

import "fmt"

// Trust says how much of a server's declared hints to believe.
type Trust uint8

const (
	// Pinned believes declared hints while the definition matches its pin,
	// and nothing relaxing after drift. It is the default.
	Pinned Trust = iota
	// Full believes declared hints as they are.
	Full
	// None believes a declared hint only when it is stricter than the default.
	None
)

func (t Trust) String() string {
	switch t {
	case Full:
		return "full"
	case None:
		return "none"
	}
	return "pinned"
}

// ParseTrust reads a trust level from config; "" is the default, pinned.
func ParseTrust(s string) (Trust, error) {
	switch s {
	case "", "pinned":
		return Pinned, nil
	case "full":
		return Full, nil
	case "none":
		return None, nil
	}
	return Pinned, fmt.Errorf("unknown trust %q (want \"full\", \"pinned\" or \"none\")", s)
}

// Notes records what Effective did, for the trace. It is a value type so
// that computing hints allocates nothing.
type Notes struct {
	// Ignored counts declared hints dropped because they would relax policy.
	Ignored int
	// Distrusted is true when trust was "pinned" but the tool drifted, so
	// the declared hints were read as under trust "none".
	Distrusted bool
	// Conflict is true when readOnlyHint=true met destructiveHint=true; the
	// tool then counts as destructive (not read-only).
	Conflict bool
	// Overridden counts hints set by trusted config overrides.
	Overridden int
}

// Effective computes the hints policy acts on: the declared hints filtered by
// trust, then the trusted overrides from config in order (later wins), then
// the destructive-beats-read-only rule.
func Effective(declared *Set, trust Trust, drifted bool, overrides ...*Set) (Set, Notes) {
	var eff Set
	var n Notes
	level := trust
	if trust == Pinned {
		level = Full
		if drifted {
			level = None
			n.Distrusted = true
		}
	}
	if level == Full {
		eff = *declared
	} else {
		for h := Hint(0); h < Count; h++ {
			v := declared[h]
			if v == Unset {
				continue
			}
			if v == Of(h.Strict()) {
				eff[h] = v
			} else {
				n.Ignored++
			}
		}
	}
	for _, o := range overrides {
		if o == nil {
			continue
		}
		for h, v := range o {
			if v != Unset {
				eff[h] = v
				n.Overridden++
			}
		}
	}
	if eff[ReadOnly] == True && eff[Destructive] == True {
		eff[ReadOnly] = False
		n.Conflict = true
	}
	return eff, n
}

// IsReadOnly reports whether the effective hints make the tool read-only.
func (s *Set) IsReadOnly() bool { return s[ReadOnly] == True }

// IsDestructive is the MCP spec reading: destructiveHint applies only when
// the tool is not read-only, and an unset destructiveHint means true.
func (s *Set) IsDestructive() bool {
	if s[Destructive] == True {
		return true
	}
	if s[ReadOnly] == True {
		return false
	}
	return s[Destructive].Or(true)
}

// IsOpenWorld is openWorldHint with the spec default (true).
func (s *Set) IsOpenWorld() bool { return s[OpenWorld].Or(true) }

// Capabilities are the three lethal-trifecta legs of a tool.
type Capabilities struct {
	ReadsPrivateData     bool `json:"reads_private_data"`
	SeesUntrustedContent bool `json:"sees_untrusted_content"`
	CanExfiltrate        bool `json:"can_exfiltrate"`
}

// Capabilities derives the trifecta legs from effective hints: an explicit
// capability wins; otherwise private data follows sensitiveDataHint, and
// untrusted content and exfiltration follow openWorldHint (default true).
func (s *Set) Capabilities() Capabilities {
	return Capabilities{
		ReadsPrivateData:     s[ReadsPrivateData].Or(s[SensitiveData] == True),
		SeesUntrustedContent: s[SeesUntrustedContent].Or(s.IsOpenWorld()),
		CanExfiltrate:        s[CanExfiltrate].Or(s.IsOpenWorld()),
	}
}
