// Package channel is how an ask reaches a human and how the answer comes
// back, for every front end (wrap and proxy, the hooks, the sdk guard):
// the question, its channels, how long they wait, and which answers are
// trusted.
//
// The question (Question, NewQuestion) is what the human is asked about
// one call: the decision's options (allow once, allow for this session,
// allow inside the proposed scopes, always, deny), a message that shows
// every argument, and, for MCP, a form-mode elicitation (Question.Params)
// whose result Question.Elicited reads back.
//
// A Runner puts one ask to the channels the config names
// (approval_channel and [webhook]) and returns the first answer. An ask
// may go to MCP elicitation (the client's own prompt, given as an Elicit
// function), to the local approval inbox (internal/inbox: every running
// toolwarden process of the user meets there, and the inbox page
// answers), or both; a configured webhook is told of it as well, with a
// one-time answer link into the inbox when the ask is there and an inbox
// runs. The call waits for the first answer from any channel, up to the
// approval timeout (DefaultTimeout; HookTimeout in a hook), then withdraws
// the ask from the others: the inbox file is removed and the
// elicitation's context cancelled. A channel that fails (a client that
// errs, an inbox that cannot be written) leaves the others waiting.
// approval_channel = "none" answers nobody: the ask is refused.
//
//	r := &channel.Runner{Setting: cfg.ApprovalChannel(d.Server, d.App), Webhook: cfg.Webhook}
//	q := channel.NewQuestion("write_file", d, args, h.CanRememberAlways())
//	ans, err := r.Ask(ctx, channel.Prompt{Origin: "wrap", Session: sid, Question: &q, Timeout: channel.DefaultTimeout}, elicit)
//	// ans.Option is one of q.Options; ans.Channel says who answered;
//	// ScopeOf(ans.Option) says how long the allow lasts
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
//
// Over MCP's multi round-trip requests the client sends the answer back on
// a retry of the call, together with the request state the asker handed
// out. Any client can put an answer on any call, so the answer counts only
// when that state is one this process minted (Signer.Mint) for this
// session, this tool definition, these exact arguments and the scopes the
// question offered, has not expired and was never used before
// (Signer.Redeem):
//
//	s := channel.NewSigner(channel.StateTTL, 1024)
//	state, _ := s.Mint(channel.Binding{Session: sid, Server: "fs", Tool: "write_file",
//		DefinitionHash: d.DefinitionHash, Arguments: args})
//	// ... the client answers and echoes state ...
//	if err := s.Redeem(state, sameBinding); err != nil {
//		// forged, replayed, expired, or for other arguments: refuse
//	}
//
// What a scope is and how a call matches it is policy's (policy.Scope);
// this package only carries the scopes a decision offers to the human and
// binds the answer to them.
package channel
