// Package channel puts one ask to a human over the approval channels the
// config names (approval_channel and [webhook]) and returns the first
// answer.
//
// An ask may go to MCP elicitation (the client's own prompt, given as an
// Elicit function), to the local approval inbox (internal/inbox: every running
// toolwarden process of the user meets there, and the inbox page answers),
// or both; a configured webhook is told of it as well, with a one-time
// answer link into the inbox when the ask is there and an inbox runs. The
// call waits for the first answer from any channel, up to the approval
// timeout, then withdraws the ask from the others: the inbox file is
// removed and the elicitation's context cancelled. A channel that fails
// (a client that errs, an inbox that cannot be written) leaves the others
// waiting. approval_channel = "none" answers nobody: the ask is refused.
//
//	r := &channel.Runner{Setting: cfg.ApprovalChannel(d.Server, d.App), Webhook: cfg.Webhook}
//	ans, err := r.Ask(ctx, channel.Prompt{Origin: "wrap", Session: sid, Question: &q, Timeout: 10 * time.Minute}, elicit)
//	// ans.Option is one of q.Options; ans.Channel says who answered
//
// Webhook posts run in the background; a short-lived process (a hook)
// gives them a bounded time with FlushWithin before it answers, and tells
// the webhook of an ask it hands to the agent's own dialog with Tell, as
// wrap and proxy tell it of a 2026-07-28 client's input request and of an
// ask no channel can take. A prompt the client ends without an option
// (Elicit returns *EndedError) ends the ask denied, audited as Declined or
// Cancelled.
//
// The webhook only ever notifies: nothing it receives is read, so an
// answer can reach an asking call only through a channel only this user
// can write (the inbox directory, or the client's own elicitation).
package channel
