package policy

import (
	"errors"
	"testing"
)

// A verdict's code and trace detail read the same whether the plugin
// rendered the detail or the pipeline does, and a failure always wins.
func TestPluginCodeAndTraceDetail(t *testing.T) {
	fault := errors.New(`plugin "p": timeout after 100ms`)
	for _, tc := range []struct {
		name         string
		v            PluginVerdict
		code, detail string
	}{
		{"an abstain without a reason has no opinion", PluginVerdict{Verdict: Abstain}, "plugin_abstain", "no opinion"},
		{"an allow without a code gets the default", PluginVerdict{Verdict: Allow}, "plugin_allow", "plugin_allow"},
		{"an ask without a code gets the default", PluginVerdict{Verdict: Ask, Reason: "why"}, "plugin_ask", "plugin_ask: why"},
		{"a deny without a code gets the default", PluginVerdict{Verdict: Deny}, "plugin_deny", "plugin_deny"},
		{"a code and reason are kept", PluginVerdict{Verdict: Ask, Code: "c", Reason: "r"}, "c", "c: r"},
		{"a failure is the plugin error, whatever it said", PluginVerdict{Verdict: Deny, Code: "c", Reason: "r", Err: fault, Detail: "c: r"},
			CodePluginError, CodePluginError + ": " + fault.Error()},
		{"a rendered detail is used", PluginVerdict{Verdict: Ask, Code: "c", Reason: "r", Detail: "c: r"}, "c", "c: r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pluginCode(&tc.v); got != tc.code {
				t.Errorf("code %q, want %q", got, tc.code)
			}
			if got := traceDetail(&tc.v); got != tc.detail {
				t.Errorf("detail %q, want %q", got, tc.detail)
			}
		})
	}
}

type namedChecker struct{ Checker }

func (namedChecker) Name() string { return "n" }

// A Checker that does not keep its reason source rendered gets it built.
func TestReasonSourceOfAPlainChecker(t *testing.T) {
	if got := reasonSource(namedChecker{}); got != "plugin:n" {
		t.Fatalf("got %q", got)
	}
}
