// Package trifecta is the first-party plugin that guards against the lethal
// trifecta: once a session has seen private data and untrusted content, a
// tool that can send data out is asked about (not rememberably) or denied.
//
// observe: a call to a tool that reads private data adds the session label
// private_data_seen; one that sees untrusted content adds
// untrusted_content_seen (from the tool's capabilities, which the host
// derives from its effective hints).
//
// check: a call to a tool that can exfiltrate, in a session that has both
// labels, gets ask (remember = false) or, with config mode = "deny", deny.
//
// Config: mode = "ask" (default) | "deny".
//
// The module toolwarden ships (plugins/trifecta.wasm) is built from the
// Rust source in rust/lib.rs; this Go package is the rule's reference
// implementation. A differential test in internal/plugin
// (TestTrifectaModuleMatchesGoReference) holds the module to this
// package's output, byte for byte, and the benchmarks use this package as
// the native twin. docs/RATIONALE.md ("First-party plugins are small
// modules") says why the module is not built from this package.
package trifecta

import (
	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// Session labels the plugin adds.
const (
	LabelPrivate   = "private_data_seen"
	LabelUntrusted = "untrusted_content_seen"
)

// Code is the verdict code of a trifecta ask or deny.
const Code = "lethal_trifecta"

var (
	labelsBoth      = []string{LabelPrivate, LabelUntrusted}
	labelsPrivate   = []string{LabelPrivate}
	labelsUntrusted = []string{LabelUntrusted}
)

// New returns the plugin with its own configuration state.
func New() *pdk.Plugin {
	mode := pdk.Ask
	return &pdk.Plugin{
		Name:    "trifecta",
		Version: "1.0.0",
		Configure: func(cfg pdk.Value) error {
			mode = pdk.Ask
			var err error
			cfg.Members(func(key string, v pdk.Value) bool {
				switch key {
				case "mode":
					switch {
					case v.StrEquals("ask"):
					case v.StrEquals("deny"):
						mode = pdk.Deny
					default:
						err = pdk.ConfigError("mode", `want "ask" or "deny", got `+string(v.Raw()))
					}
				default:
					err = pdk.ConfigError(key, `unknown key (trifecta knows only "mode")`)
				}
				return err == nil
			})
			return err
		},
		Check: func(c *pdk.Check) pdk.Verdict {
			return Check(mode, c)
		},
		Observe: Observe,
	}
}

// Check is the check rule.
func Check(mode pdk.Decision, c *pdk.Check) pdk.Verdict {
	call := c.Call()
	if !call.Capabilities().CanExfiltrate {
		return pdk.NoOpinion()
	}
	s := c.Session()
	if !s.HasLabel(LabelPrivate) || !s.HasLabel(LabelUntrusted) {
		return pdk.NoOpinion()
	}
	return pdk.Verdict{
		Decision: mode,
		Code:     Code,
		Reason: "this session has read private data and untrusted content, and " +
			pdk.Quote(call.ToolName()) + " can send data out (lethal trifecta)",
	}
}

// Observe is the observe rule.
func Observe(o *pdk.Observe) []string {
	caps := o.Call().Capabilities()
	switch {
	case caps.ReadsPrivateData && caps.SeesUntrustedContent:
		return labelsBoth
	case caps.ReadsPrivateData:
		return labelsPrivate
	case caps.SeesUntrustedContent:
		return labelsUntrusted
	}
	return nil
}
