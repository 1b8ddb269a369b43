package policy

import "github.com/toolwarden/toolwarden/internal/hints"

// baselineWords is step 4's reason as a person reads it: what the tool
// does, in plain words, and what follows ("asking", "allowed"). The mode
// names and hint names ("auto", "destructiveHint") stay in the trace's
// approval_mode step, for those who want them; the reason is what a prompt,
// a hook's answer and a refusal show, and "auto: tool is destructive" told
// a new user nothing. Codes are unchanged (docs/stability.md).
func baselineWords(tool, code string, h *hints.Set) string {
	switch code {
	case CodeAutoDestructive:
		return tool + " can change files or data: asking"
	case CodeAutoReadOnly:
		return tool + " only reads: allowed"
	case CodeAutoOpenWorld:
		if h[hints.OpenWorld] == hints.True {
			return tool + " reaches outside this machine (open world): asking"
		}
		if h[hints.Destructive] == hints.True {
			return tool + " can change files or data: asking"
		}
		return tool + " does not say whether it changes anything or reaches outside this machine: asking"
	case CodeAutoSafe:
		return tool + " neither changes anything nor reaches outside this machine: allowed"
	case CodeModeApprove:
		return "your config lets " + tool + " run without asking: allowed"
	case CodeModePrompt:
		return "your config asks before every call of " + tool + ": asking"
	case CodeModeWritesReadOnly:
		return tool + " only reads, and your config asks only before changes: allowed"
	case CodeModeWritesWrite:
		return tool + " may change things, and your config asks before changes: asking"
	}
	return tool + ": " + code
}
