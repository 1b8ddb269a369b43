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
// with room to start and answer.
func TestAHookAnswersBeforeTheAgentKillsIt(t *testing.T) {
	t.Parallel()
	if spent := HookTimeout + HookWebhookGrace; spent > agentHookTimeout-5*time.Second {
		t.Errorf("a hook may spend %s waiting, too close to the agent's %s", spent, agentHookTimeout)
	}
}

// clientToolTimeout is what the TypeScript SDK (DEFAULT_REQUEST_TIMEOUT_MSEC)
// and Codex (tool_timeout_sec) give a tool call by default.
const clientToolTimeout = 60 * time.Second

// An ask in wrap, proxy or the sdk ends before the client gives up on the
// call, so the client hears the outcome instead of timing out on its own.
func TestAnAskEndsBeforeTheCommonClientsGiveUp(t *testing.T) {
	t.Parallel()
	if DefaultTimeout > clientToolTimeout-5*time.Second {
		t.Errorf("DefaultTimeout %s is too close to the clients' %s: they give up first and the answer is lost", DefaultTimeout, clientToolTimeout)
	}
	if StateTTL < DefaultTimeout {
		t.Errorf("StateTTL %s is shorter than an ask", StateTTL)
	}
}
