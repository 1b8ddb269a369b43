package policy

import "sync"

// What step 5 pays per plugin besides the plugin itself: a decision with
// plugins used to allocate the plugin's input, a reason source and a trace
// detail per plugin, and slices for the verdicts. A warm plugin returns the
// same verdict call after call, so these are taken from the plugin where it
// can keep them (ReasonSourcer, PluginVerdict.Detail), and the rest lives
// in pooled or stack space.

// ReasonSourcer is implemented by a Checker that keeps its reason source
// ("plugin:<name>") rendered, so that a decision does not build it per call.
type ReasonSourcer interface {
	ReasonSource() string
}

// reasonSource is "plugin:<name>".
func reasonSource(p Checker) string {
	if s, ok := p.(ReasonSourcer); ok {
		return s.ReasonSource()
	}
	return StepPlugin + ":" + p.Name()
}

// pluginCode is the verdict's code, "plugin_<verdict>" when it gave none.
func pluginCode(v *PluginVerdict) string {
	if v.Err != nil {
		return CodePluginError
	}
	if v.Code != "" {
		return v.Code
	}
	switch v.Verdict {
	case Allow:
		return "plugin_allow"
	case Ask:
		return "plugin_ask"
	case Deny:
		return "plugin_deny"
	}
	return "plugin_abstain"
}

// pluginMessage is the verdict's reason, or the failure.
func pluginMessage(v *PluginVerdict) string {
	if v.Err != nil {
		return v.Err.Error()
	}
	return v.Reason
}

// TraceDetail is the trace detail of a verdict without its state ("code:
// reason", "code", or "no opinion"). A plugin that returns one verdict many
// times may render it once and set PluginVerdict.Detail to it.
func TraceDetail(v *PluginVerdict) string {
	code, msg := pluginCode(v), pluginMessage(v)
	switch {
	case v.Verdict == Abstain && v.Err == nil && msg == "":
		return "no opinion"
	case msg != "":
		return code + ": " + msg
	}
	return code
}

// traceDetail is TraceDetail, from the plugin's rendering when it has one.
func traceDetail(v *PluginVerdict) string {
	if v.Detail != "" && v.Err == nil {
		return v.Detail
	}
	return TraceDetail(v)
}

// checkInputs recycles the input handed to plugins: a Checker must not keep
// it after Check returns (decision.go).
var checkInputs = sync.Pool{New: func() any { return new(CheckInput) }}
