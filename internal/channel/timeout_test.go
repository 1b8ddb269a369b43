package channel

import (
	"testing"
	"time"
)

// agentHookTimeout is what Claude Code, Codex and Gemini CLI give a hook
// command by default before they kill it.
const agentHookTimeout = 60 * time.Second

// A hook must answer before the agent kills it: the inbox wait and the
// webhook grace together stay under the agent's default hook timeout,
// with room to start and answer. The other front ends have no such
// bound, and wait DefaultTimeout.
func TestAHookAnswersBeforeTheAgentKillsIt(t *testing.T) {
	t.Parallel()
	if spent := HookTimeout + HookWebhookGrace; spent > agentHookTimeout-5*time.Second {
		t.Errorf("a hook may spend %s waiting, too close to the agent's %s", spent, agentHookTimeout)
	}
	if HookTimeout >= DefaultTimeout {
		t.Errorf("HookTimeout %s is not shorter than DefaultTimeout %s: it has no reason to exist", HookTimeout, DefaultTimeout)
	}
}
