package serve

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/toolresult"
)

// A 2025-era session started on one replica may continue on any other
// that holds the same session secret and store: the sealed id verifies
// there, keys the same host session, and the host loads the session's
// state from the store. mcp-go serves such a request with a session of
// the request's own (it keeps no registry across processes), which knows
// nothing of the client's initialize: so only the replica that started a
// session asks its client for approval. That is also what keeps answers
// straight: mcp-go numbers the requests it sends a client per process,
// so an answer that reached a replica other than the asker could match
// another question of the same session there. See docs/serve.md,
// Replicas.

// sessionInitialised remembers a 2025-era session this process started
// (mcp-go's after-initialize hook).
func (s *Server) sessionInitialised(ctx context.Context, _ any, _ *mcp.InitializeRequest, _ *mcp.InitializeResult) {
	if cs := server.ClientSessionFromContext(ctx); cs != nil && cs.SessionID() != "" {
		s.initialised.Store(cs.SessionID(), struct{}{})
	}
}

// startedElsewhere reports whether the request belongs to a 2025-era
// session this process did not start (another replica did, or this one
// before it restarted).
func (s *Server) startedElsewhere(ctx context.Context, c caller) bool {
	if c.modern {
		return false
	}
	cs := server.ClientSessionFromContext(ctx)
	if cs == nil || cs.SessionID() == "" {
		return false
	}
	_, here := s.initialised.Load(cs.SessionID())
	return !here
}

// askedElsewhere is the answer to a call that needs approval in a session
// this replica cannot ask: the call is not made, and the tool error says
// how to be asked.
func (s *Server) askedElsewhere(rt *route, call host.Call, d *host.Decision) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "toolwarden: this call to %s needs the user's approval, but this session was started on another replica of the gateway (or before this replica restarted), and only the replica that started a session can ask its client. The call was not made.\n", rt.name)
	toolresult.HowToAllow(&b, d, toolresult.AlwaysFor(s.h, call.Session), "call it again in a session whose requests reach one replica (a load balancer sticky on Mcp-Session-Id), or in a new session", false)
	return mcp.NewToolResultError(b.String())
}
