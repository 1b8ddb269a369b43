package hints

import (
	"strings"
)

// Tri is a tri-state hint value: a tool may claim true, claim false, or say nothing.
type Tri int8

const (
	Unset Tri = iota
	False
	True
)

// Of turns a Go bool into a set Tri.
func Of(b bool) Tri {
	if b {
		return True
	}
	return False
}

// Is reports whether t is set and equal to b.
func (t Tri) Is(b bool) bool { return t == Of(b) }

// Or returns t when it is set, else def.
func (t Tri) Or(def bool) bool {
	if t == Unset {
		return def
	}
	return t == True
}

func (t Tri) String() string {
	switch t {
	case True:
		return "true"
	case False:
		return "false"
	}
	return "unset"
}

// Hint names one annotation or capability that toolwarden understands.
type Hint uint8

const (
	// MCP spec 2025-03-26 hints.
	ReadOnly Hint = iota
	Destructive
	Idempotent
	OpenWorld
	// SEP-1984 proposed hints.
	SensitiveData
	PrivilegedAccess
	Reversible
	SlowExecution
	ResourceIntensive
	AIProcessing
	// Lethal-trifecta capabilities.
	ReadsPrivateData
	SeesUntrustedContent
	CanExfiltrate

	// Count is the number of known hints.
	Count
)

var names = [Count]string{
	ReadOnly:             "readOnlyHint",
	Destructive:          "destructiveHint",
	Idempotent:           "idempotentHint",
	OpenWorld:            "openWorldHint",
	SensitiveData:        "sensitiveDataHint",
	PrivilegedAccess:     "privilegedAccessHint",
	Reversible:           "reversibleHint",
	SlowExecution:        "slowExecutionHint",
	ResourceIntensive:    "resourceIntensiveHint",
	AIProcessing:         "aiProcessingHint",
	ReadsPrivateData:     "reads_private_data",
	SeesUntrustedContent: "sees_untrusted_content",
	CanExfiltrate:        "can_exfiltrate",
}

// strict is the value of each hint that can only make policy stricter. Under
// trust "none" a declared hint counts only when it equals this value.
var strict = [Count]bool{
	ReadOnly:             false,
	Destructive:          true,
	Idempotent:           false,
	OpenWorld:            true,
	SensitiveData:        true,
	PrivilegedAccess:     true,
	Reversible:           false,
	SlowExecution:        true,
	ResourceIntensive:    true,
	AIProcessing:         true,
	ReadsPrivateData:     true,
	SeesUntrustedContent: true,
	CanExfiltrate:        true,
}

// Name is the hint's wire name (the annotation key, or the capability name).
func (h Hint) Name() string {
	if h < Count {
		return names[h]
	}
	return "unknown"
}

func (h Hint) String() string { return h.Name() }

// Strict is the value of h that can only tighten policy.
func (h Hint) Strict() bool { return strict[h] }

// IsCapability reports whether h is one of the three trifecta legs.
func (h Hint) IsCapability() bool { return h >= ReadsPrivateData && h < Count }

// Lookup finds a hint by wire name. It also accepts the camelCase spellings of
// the capabilities (readsPrivateData, seesUntrustedContent, canExfiltrate).
func Lookup(name string) (Hint, bool) {
	for h := Hint(0); h < Count; h++ {
		if names[h] == name {
			return h, true
		}
	}
	switch name {
	case "readsPrivateData":
		return ReadsPrivateData, true
	case "seesUntrustedContent":
		return SeesUntrustedContent, true
	case "canExfiltrate":
		return CanExfiltrate, true
	}
	return 0, false
}

// Names lists every hint's wire name, in Hint order.
func Names() []string {
	out := make([]string, Count)
	copy(out, names[:])
	return out
}

// Set holds one tri-state value per known hint. The zero Set says nothing.
type Set [Count]Tri

// Get returns the value of h.
func (s *Set) Get(h Hint) Tri { return s[h] }

// Put sets h to v.
func (s *Set) Put(h Hint, v Tri) { s[h] = v }

// Apply overlays every set value of o onto s.
func (s *Set) Apply(o *Set) {
	for i, v := range o {
		if v != Unset {
			s[i] = v
		}
	}
}

// Empty reports whether no hint is set.
func (s *Set) Empty() bool {
	for _, v := range s {
		if v != Unset {
			return false
		}
	}
	return true
}

// String renders the set hints as "name=value" pairs in Hint order.
func (s *Set) String() string {
	var b strings.Builder
	for h := Hint(0); h < Count; h++ {
		if s[h] == Unset {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(names[h])
		b.WriteByte('=')
		b.WriteString(s[h].String())
	}
	return b.String()
}

// MarshalJSON renders the set hints as a JSON object; unset hints are omitted.
func (s Set) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 64)
	b = append(b, '{')
	first := true
	for h := Hint(0); h < Count; h++ {
		if s[h] == Unset {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, names[h]...)
		b = append(b, '"', ':')
		b = append(b, s[h].String()...)
	}
	return append(b, '}'), nil
}
