package serve

import (
	"context"
	"fmt"
	"net/url"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/identity"
)

// ConversationMetaKey is the _meta key by which a 2026-07-28 client (which
// has no protocol session) names its conversation: "session" approvals,
// pins and labels are kept per principal and conversation. Without it, a
// principal's calls share one conversation.
const ConversationMetaKey = "io.toolwarden/conversation"

// maxConversationKey bounds a conversation key, which keys host state.
const maxConversationKey = 256

// caller is who makes one request, and the host session it decides in.
type caller struct {
	principal identity.Principal
	// session is the host session id: the principal and, under 2025-era
	// protocols, the sealed Mcp-Session-Id (which verified as the
	// principal's), or, under 2026-07-28, the conversation key. The parts
	// are escaped and tagged ("/s/", "/c/") so that no principal, session
	// or conversation can spell another's id.
	session string
	modern  bool
}

// callerOf is the caller of the request ctx belongs to; meta is the
// request's params._meta.
func (s *Server) callerOf(ctx context.Context, meta *mcp.Meta) (caller, error) {
	p, ok := identity.FromContext(ctx)
	if !ok {
		return caller{}, errNoPrincipal
	}
	c := caller{principal: p}
	who := url.PathEscape(p.Name)
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		conv, err := conversationKey(meta)
		if err != nil {
			return caller{}, err
		}
		c.modern = true
		c.session = who + "/c/" + url.PathEscape(conv)
		s.touchConversation(c.session)
		return c, s.bind(c)
	}
	sid := ""
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		sid = cs.SessionID()
	}
	c.session = who + "/s/" + sid
	if sid != "" {
		s.legacy.LoadOrStore(sid, c.session)
	}
	return c, s.bind(c)
}

// bind tells the host who the session's caller is, so that policy can
// name principals and groups and approvers count. A session is bound to
// one caller for its life: if the principal's groups changed since (its
// token's entry was edited), the host refuses, and the caller must start
// a new session (or conversation).
func (s *Server) bind(c caller) error {
	return s.h.SetCaller(c.session, host.Caller{Name: c.principal.Name, Groups: c.principal.Groups})
}

// conversationKey reads _meta["io.toolwarden/conversation"]: "" when
// absent, an error when it is not a string of at most 256 bytes.
func conversationKey(meta *mcp.Meta) (string, error) {
	if meta == nil || meta.AdditionalFields == nil {
		return "", nil
	}
	v, ok := meta.AdditionalFields[ConversationMetaKey]
	if !ok || v == nil {
		return "", nil
	}
	k, ok := v.(string)
	if !ok || len(k) > maxConversationKey {
		return "", fmt.Errorf("_meta %q must be a string of at most %d bytes", ConversationMetaKey, maxConversationKey)
	}
	return k, nil
}
