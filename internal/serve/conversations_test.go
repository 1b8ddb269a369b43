package serve

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// A 2026-07-28 conversation idle past the session TTL is forgotten (its
// host session ends); one in use is kept.
func TestAnIdleConversationIsForgottenAndABusyOneKept(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, "", host.Defaults())
	s := New(h, nil, Options{IdleSessionTTL: time.Hour})
	now := time.Now()
	s.now = func() time.Time { return now }
	modern := func(conv string) caller {
		ctx := identity.WithPrincipal(context.Background(), identity.Principal{Name: "alice"})
		ctx = server.WithRequestProtocolInfo(ctx, &server.RequestProtocolInfo{Modern: true})
		c, err := s.callerOf(ctx, &mcp.Meta{AdditionalFields: map[string]any{ConversationMetaKey: conv}})
		if err != nil {
			t.Fatal(err)
		}
		h.Session(c.session) // the host holds it once a call decides in it
		return c
	}
	idle, busy := modern("idle"), modern("busy")
	now = now.Add(50 * time.Minute)
	modern("busy")
	now = now.Add(20 * time.Minute)
	s.sweepConversations()
	if _, ok := h.LookupSession(idle.session); ok {
		t.Error("the conversation idle for 70 minutes is still held")
	}
	if _, ok := h.LookupSession(busy.session); !ok {
		t.Error("the conversation used 20 minutes ago was forgotten")
	}
}
