package serve

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// upstreams is the current set of upstream clients; the slice is never
// changed in place (Reload swaps it), so a caller may range over it.
func (s *Server) upstreams() []*upstream.Client {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ups
}

// Reload applies cfg at run time: the host decides by it from the next
// decision on (sessions keep their approvals, pins and labels), and, when
// Options.SpecsOf is set, the upstreams follow its [mcp_servers.*]: a new
// server is started, a removed or disabled one stopped, a changed one
// (command, URL, headers, timeouts...) restarted; the others keep running
// untouched. Every session is told the tool list changed. An invalid cfg
// changes nothing and Reload says why.
func (s *Server) Reload(ctx context.Context, cfg *config.Config) error {
	var specs []serverspec.Spec
	if s.opts.SpecsOf != nil {
		var err error
		if specs, err = s.opts.SpecsOf(cfg); err != nil {
			return fmt.Errorf("reload: the servers of the new config: %w", err)
		}
	}
	if err := s.h.Reload(ctx, cfg); err != nil {
		return err
	}
	if s.opts.SpecsOf != nil {
		s.replaceUpstreams(ctx, specs)
	}
	s.rebuild()
	return nil
}

// replaceUpstreams moves the upstream set to specs, keeping every client
// whose spec did not change.
func (s *Server) replaceUpstreams(ctx context.Context, specs []serverspec.Spec) {
	old := map[string]*upstream.Client{}
	for _, u := range s.upstreams() {
		old[u.Name()] = u
	}
	var next, started []*upstream.Client
	for _, sp := range specs {
		if u, ok := old[sp.Name]; ok && sameSpec(u.Spec(), sp) {
			next = append(next, u)
			delete(old, sp.Name)
			continue
		}
		u := s.newUpstream(sp)
		next = append(next, u)
		started = append(started, u)
	}
	s.mu.Lock()
	s.ups = next
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, u := range old {
		s.log.Info("upstream removed or changed by a reload; stopping it", "server", u.Name())
		wg.Go(func() { _ = u.Close() })
	}
	for _, u := range started {
		s.log.Info("upstream added or changed by a reload; starting it", "server", u.Name())
		wg.Go(func() {
			if err := u.Start(ctx); err != nil {
				s.log.Error("upstream did not start; retrying in the background", "server", u.Name(), "err", err)
				go s.keepTrying(s.runCtx(), u)
			}
		})
	}
	wg.Wait()
}

// sameSpec reports whether two specs reach the same server the same way
// (their log destinations aside).
func sameSpec(a, b serverspec.Spec) bool {
	a.Stderr, a.Logger, b.Stderr, b.Logger = nil, nil, nil, nil
	return reflect.DeepEqual(a, b)
}
