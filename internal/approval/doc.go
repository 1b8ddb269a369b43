// Package approval is how the proxy asks a human about a tool call and
// trusts the answer.
//
// An ask becomes an MCP elicitation (Question.Params) offering the
// decision's options: allow once, allow for this session, always, deny.
// Over MCP's multi round-trip requests the client sends the answer back on a
// retry of the call, together with the request state the proxy handed out.
// Any client can put an answer on any call, so the answer counts only when
// that state is one this process minted (Signer.Mint) for this session, this
// tool definition and these exact arguments, has not expired and was never
// used before (Signer.Redeem).
//
//	s := approval.NewSigner(10*time.Minute, 1024)
//	state, _ := s.Mint(approval.Binding{Session: sid, Server: "fs", Tool: "write_file",
//		DefinitionHash: d.DefinitionHash, Arguments: args})
//	// ... the client answers and echoes state ...
//	if err := s.Redeem(state, sameBinding); err != nil {
//		// forged, replayed, expired, or for other arguments: refuse
//	}
package approval
