package host

// CanRememberAlways reports whether an "always" approval can be kept, so
// a front end offers that answer only when Approve(..., Always) would
// record it: the host has an approvals file (WithApprovalsFile) or a
// shared store (WithStore). A library host built with neither offers
// once and session only.
func (h *Host) CanRememberAlways() bool { return h.always != nil || h.shared.st != nil }
