package policy

// approvalPolicy is step 7: what Codex's approval_policy does to an ask.
//
//   - "never": no human will be asked, so an ask is a deny ("requires
//     approval, but approval_policy is never"), as in Codex.
//   - "never" with sandbox_mode = "danger-full-access": Codex runs every MCP
//     call without asking, so an ask that Codex itself raises (its own mode
//     and hints ask, step 4) is allowed. An ask that only toolwarden raises
//     (a plugin's, a definition that drifted from its pin, toolwarden's
//     stricter rules) still cannot be put to a human: it is a deny, never a
//     silent allow.
//   - granular with mcp_elicitations = false: Codex declines elicitations
//     that servers start, but still asks the user about tool calls
//     (request_mcp_tool_user_approval only checks "never"); so does
//     toolwarden.
//   - anything else: the ask goes to a human.
//
// Denies (hidden tools, plugins) stay denies under every value.
func (r *Rules) approvalPolicy(s *state, in *Input, d *Decision) {
	if d.Decision != Ask || !r.never {
		if in.NoTrace {
			return
		}
		detail := r.policy
		if r.elicitationsOff {
			detail = "granular with mcp_elicitations = false: server elicitations are declined, tool calls are still asked (Codex)"
		}
		d.Trace = append(d.Trace, Step{Step: StepApprovalPolicy, Outcome: "pass", Source: r.policySrc, Detail: detail})
		return
	}
	if r.fullAccess {
		switch {
		case askedByPlugin(d):
			r.denyNoHuman(d, "a policy plugin asks, and approval_policy is never: no one can be asked, even with danger-full-access")
		case in.Drifted:
			r.denyNoHuman(d, "the tool's definition changed since it was pinned, and approval_policy is never: no one can approve the new definition, even with danger-full-access")
		case !s.codexAsks:
			r.denyNoHuman(d, "toolwarden's own rules ask (Codex's would not), and approval_policy is never: no one can be asked, even with danger-full-access")
		default:
			d.Decision = Allow
			d.Reasons = append(d.Reasons[:0], Reason{Source: StepApprovalPolicy, Code: CodeFullAccess,
				Message: "approval_policy is never with sandbox_mode danger-full-access: Codex runs MCP calls without asking"})
			d.Trace = append(d.Trace, Step{Step: StepApprovalPolicy, Outcome: "allow", Source: r.policySrc, Detail: "Codex's own ask is auto-approved under full access"})
		}
		return
	}
	r.denyNoHuman(d, "requires approval, but approval_policy is never")
}

func (r *Rules) denyNoHuman(d *Decision, msg string) {
	d.Decision = Deny
	d.Reasons = append(d.Reasons, Reason{Source: StepApprovalPolicy, Code: CodePolicyNever, Message: msg})
	d.Trace = append(d.Trace, Step{Step: StepApprovalPolicy, Outcome: "deny", Source: r.policySrc, Detail: r.policy + " turns ask into deny"})
}
