package serve

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/testkit"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// everythingServers is a config whose [mcp_servers] run server-everything
// (stdio) under each name.
func everythingServers(bin string, names ...string) string {
	var b string
	for _, n := range names {
		b += fmt.Sprintf("[mcp_servers.%s]\ncommand = %q\nargs = [\"stdio\"]\n\n", n, bin)
	}
	return b
}

func specsOf(cfg *config.Config) ([]serverspec.Spec, error) {
	var specs []serverspec.Spec
	for _, n := range slices.Sorted(func(yield func(string) bool) {
		for n := range cfg.Servers {
			if !yield(n) {
				return
			}
		}
	}) {
		sp, err := serverspec.FromConfig(cfg.Servers[n], func(string) string { return "" })
		if err != nil {
			return nil, err
		}
		specs = append(specs, sp)
	}
	return specs, nil
}

func routeNames(s *Server) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var names []string
	for n := range s.routes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// A reload that adds a server starts it and lists its tools, one that
// removes a server stops it and drops its tools, and a server whose spec
// did not change keeps its running client.
func TestReloadStartsAddedServersStopsRemovedOnesAndKeepsTheRest(t *testing.T) {
	t.Parallel()
	bin := testkit.NPMBin(t, "mcp-server-everything")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	first := everythingServers(bin, "one")
	h := testhost.New(t, first, host.Defaults())
	cfg := testhost.Config(t, first)
	specs, err := specsOf(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := New(h, specs, Options{SpecsOf: specsOf})
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(routeNames(s), "one__echo") {
		t.Fatalf("routes after start: %v", routeNames(s))
	}
	kept := s.upstreams()[0]

	if err := s.Reload(ctx, testhost.Config(t, everythingServers(bin, "one", "two"))); err != nil {
		t.Fatal(err)
	}
	names := routeNames(s)
	if !slices.Contains(names, "one__echo") || !slices.Contains(names, "two__echo") {
		t.Fatalf("routes after adding two: %v", names)
	}
	if s.upstreams()[0] != kept {
		t.Fatal("the unchanged server one was restarted")
	}

	if err := s.Reload(ctx, testhost.Config(t, everythingServers(bin, "two"))); err != nil {
		t.Fatal(err)
	}
	names = routeNames(s)
	if slices.Contains(names, "one__echo") || !slices.Contains(names, "two__echo") {
		t.Fatalf("routes after removing one: %v", names)
	}
	if _, err := kept.Call(ctx, "echo", []byte(`{"message":"x"}`)); err == nil {
		t.Fatal("the removed server's client still answers")
	}
}
