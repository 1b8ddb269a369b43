package serve

import (
	"context"
	"sync/atomic"
	"time"
)

// A 2026-07-28 conversation has no end the client announces (no session,
// no DELETE), so the host session it keys is ended once it has been idle
// for Options.IdleSessionTTL, as an idle 2025-era session is. Without it,
// every conversation key a caller ever sent would stay in memory.

// touchConversation notes that the host session of a conversation was used.
func (s *Server) touchConversation(session string) {
	now := s.clock().UnixNano()
	if v, ok := s.conversations.Load(session); ok {
		v.(*atomic.Int64).Store(now)
		return
	}
	last := &atomic.Int64{}
	last.Store(now)
	if v, loaded := s.conversations.LoadOrStore(session, last); loaded {
		v.(*atomic.Int64).Store(now)
	}
}

// sweepConversations ends the conversations idle longer than the TTL.
func (s *Server) sweepConversations() {
	cutoff := s.clock().Add(-s.opts.IdleSessionTTL).UnixNano()
	s.conversations.Range(func(k, v any) bool {
		last := v.(*atomic.Int64)
		if last.Load() >= cutoff || !s.conversations.CompareAndDelete(k, v) {
			return true
		}
		if last.Load() >= cutoff {
			// Used between the check and the delete: keep it.
			s.conversations.Store(k, v)
			return true
		}
		s.h.EndSession(k.(string))
		return true
	})
}

// sweepEvery runs sweepConversations every half TTL until ctx ends.
func (s *Server) sweepEvery(ctx context.Context) {
	t := time.NewTicker(max(s.opts.IdleSessionTTL/2, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sweepConversations()
		}
	}
}

func (s *Server) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}
