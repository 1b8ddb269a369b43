package channel

import (
	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// ScopeOf is how long an answer allows the call, whichever channel gave
// it: allow is false for a deny and for anything that is not one of the
// options (policy.Option...), so an unknown answer never allows.
func ScopeOf(option string) (scope host.Scope, allow bool) {
	switch option {
	case policy.OptionAllowOnce:
		return host.Once, true
	case policy.OptionAllowSession:
		return host.ForSession, true
	case policy.OptionAllowSessionScoped:
		return host.ForSessionScoped, true
	case policy.OptionAlways:
		return host.Always, true
	}
	return host.Once, false
}
