package policy

import (
	"fmt"
	"strings"
)

// DenyAdvice says, for a denied decision, which rule denied the call and
// what would allow it, as one clause for the model and the person reading
// its transcript: the rule's place (a config key, a policy plugin, an
// admin's requirements file) and the change that lifts it. It is "" for a
// decision that is not a deny, or whose rule offers no way round (the
// client's own arguments are at fault: the reason says so).
func DenyAdvice(d *Decision) string { return denyAdvice(d, ApproveAdvice) }

// BuiltinDenyAdvice is DenyAdvice for a call to an agent's own tool
// (Claude Code's Bash, Gemini CLI's run_shell_command, Codex's shell),
// which a hook decides under the agent's app: the advice names that app's
// table, never an MCP server to define or wrap, since none serves the tool.
// agent is the agent's name as a person knows it ("Claude Code").
func BuiltinDenyAdvice(d *Decision, agent string) string {
	return denyAdvice(d, func(d *Decision) string { return BuiltinApproveAdvice(d, agent) })
}

// BuiltinApproveAdvice is ApproveAdvice for an agent's own tool: the
// agent's [apps.<agent>.tools."<tool>"] table, the one place that decides
// it.
func BuiltinApproveAdvice(d *Decision, agent string) string {
	return fmt.Sprintf("set approval_mode = \"approve\" in [apps.%s.tools.%q] of the toolwarden config (%s is %s's own tool, not an MCP server's: there is no server to define or wrap for it)", d.App, d.Tool, d.Tool, agent)
}

func denyAdvice(d *Decision, approve func(*Decision) string) string {
	if d.Decision != Deny || len(d.Reasons) == 0 {
		return ""
	}
	r := denyingReason(d)
	if r.RequiredBy != "" {
		return "an admin's requirements file sets this (required by " + r.RequiredBy + "): only an admin can allow the call"
	}
	switch {
	case strings.HasPrefix(r.Source, StepPlugin+":"):
		name := strings.TrimPrefix(r.Source, StepPlugin+":")
		if r.Code == CodeHiddenByPlugin {
			return "the policy plugin [policies." + name + "] hides this tool; to allow it, change that plugin's config in the toolwarden config"
		}
		if r.Code == CodePluginError {
			return "the policy plugin [policies." + name + "] failed and its on_error is \"deny\"; fix the plugin, or set its on_error in the toolwarden config"
		}
		return "the policy plugin [policies." + name + "] denied it (" + r.Code + "); to allow it, change that plugin's rules in [policies." + name + "] of the toolwarden config"
	case r.Source == StepVisibility:
		where := visibilitySource(d)
		if where == "" {
			return "the toolwarden config hides this tool; to allow it, enable the tool there"
		}
		return "the toolwarden config hides this tool (" + where + "); to allow it, change that setting"
	case r.Source == StepApprovalPolicy:
		return "approval_policy turns every ask into a deny; to allow it, " + approve(d) + ", or set approval_policy to \"on-request\""
	}
	return ""
}

// visibilitySource is where the visibility step found the setting that
// hides the tool, when the decision was traced.
func visibilitySource(d *Decision) string {
	for _, st := range d.Trace {
		if st.Step == StepVisibility {
			return st.Source
		}
	}
	return ""
}

// denyingReason is the reason that made d a deny: a plugin's, or
// approval_policy's (which follows the ask it turned), over the baseline's
// beside them.
func denyingReason(d *Decision) Reason {
	for _, x := range d.Reasons {
		if strings.HasPrefix(x.Source, StepPlugin+":") || x.Source == StepApprovalPolicy {
			return x
		}
	}
	return d.Reasons[0]
}
