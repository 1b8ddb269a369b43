package host

import "context"

// PolicyClosed is closed once the plugins of the policy h decides by now
// were closed (after a Reload replaced it and its last call ended).
func PolicyClosed(h *Host) <-chan struct{} { return h.gen.Load().done }

// CheckUncounted is Check without counting the call as a use of the
// policy (a plain pointer load): the baseline of what the count costs.
func CheckUncounted(h *Host, ctx context.Context, c Call) Decision {
	return h.check(ctx, h.gen.Load(), c)
}

// TakePolicy takes and releases the current policy, as every Check does.
func TakePolicy(h *Host) { h.acquire().release() }

// RaceEnabled is raceEnabled, for the external tests.
const RaceEnabled = raceEnabled
