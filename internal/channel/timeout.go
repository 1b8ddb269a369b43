package channel

import "time"

// DefaultTimeout is how long an ask waits for an answer, on every channel
// and in every front end (wrap, proxy, the sdk guard and sdk.Inbox), when
// nothing else is set (--approval-timeout, sdk.WithApprovalTimeout). No
// answer in time is a deny.
//
// It is below the time the common clients give a tool call (60 s: the
// TypeScript SDK's request timeout, Codex's tool_timeout_sec), so that the
// ask ends, and the client hears why, before the client gives up on the
// call and the answer has nowhere to go. Raise it together with the
// client's timeout (docs/approvals.md, "How long an ask waits").
const DefaultTimeout = 50 * time.Second

// StateTTL is how long a multi round-trip request state stays valid: a
// 2026-07-28 client answers an input request by retrying the call within
// it, in the proxy (WithStateTTL) and the sdk's server. The call has
// already returned to the client then, so no client timeout bounds it.
const StateTTL = 10 * time.Minute

// HookTimeout is how long a hook waits for an answer in the approval
// inbox. It is bounded by the agent's hook timeout, because a hook is a
// command the agent runs and kills: agents give a hook 60 s by default, and a hook
// still waiting then is killed without an answer, so the agent applies its
// own rule instead of toolwarden's decision. 50 s leaves the hook time to
// answer (and HookWebhookGrace for its webhook posts) before that.
const HookTimeout = 50 * time.Second

// HookWebhookGrace is how long a hook's answer may wait, once it is ready,
// for webhook posts still in flight (Runner.FlushWithin); posts unfinished
// then are abandoned (logged and audited). A hook process ends with its
// answer, so a post cannot outlive it, and an agent gives a hook a fixed
// time: a slow receiver must cost it at most this, never the webhook's
// timeout.
const HookWebhookGrace = time.Second
