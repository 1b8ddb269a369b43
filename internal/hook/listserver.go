package hook

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolwarden/toolwarden/internal/catalog"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// Listed is what listing one server gave (ListServer): its tool catalog
// entry, or why not.
type Listed struct {
	Server Server
	Entry  *catalog.Entry
	Err    error
}

// ListServer is `toolwarden tools sync`'s listing of one server an agent's
// config names: it starts s (a stdio command, or an HTTP session), reads
// its whole tools/list within timeout, and stops it. The entry's tools are
// the definitions as the server sent them, minus those toolwarden could
// not read (no name) or saw twice, as in the proxy.
//
//	l := hook.ListServer(ctx, server, 30*time.Second, version)
//	if l.Err == nil { err = catalog.Write(dir, l.Entry) }
func ListServer(ctx context.Context, s Server, timeout time.Duration, version string) Listed {
	if s.Err != nil {
		return Listed{Server: s, Err: s.Err}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	spec := s.Spec
	if spec.StartupTimeout == 0 || spec.StartupTimeout > timeout {
		spec.StartupTimeout = timeout
	}
	c := upstream.New(spec, version, nil)
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return Listed{Server: s, Err: err}
	}
	tools := c.Tools()
	raws := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		raws[i] = t.Raw
	}
	return Listed{Server: s, Entry: &catalog.Entry{
		Version: catalog.Version,
		Server:  s.Name,
		// What was started, taken literally: a `toolwarden wrap` command
		// line is that command line here (wrap writes its upstream's entry
		// itself), so a file merely named toolwarden lists nothing for the
		// server it claims to wrap.
		Identity: spec.Identity(),
		Source:   "toolwarden tools sync: " + s.Source,
		ListedAt: time.Now().UTC(),
		Tools:    raws,
	}}
}
