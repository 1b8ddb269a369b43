package host

// PolicyClosed is closed once the plugins of the policy h decides by now
// were closed (after a Reload replaced it and its last call ended).
func PolicyClosed(h *Host) <-chan struct{} { return h.gen.Load().done }
