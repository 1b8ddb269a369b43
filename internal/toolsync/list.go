// Package toolsync lists one MCP server the agents' configs name, for
// `toolwarden tools sync`: it starts the server with the upstream client,
// reads its whole tools/list and stops it. It lives apart from internal/hook so
// that a Go program importing the hook adapters (Parse, Render, the
// catalog reader) links no MCP client, and it cannot live in cmd/toolwarden,
// which may not import the internal client it starts servers with.
//
//	l := toolsync.List(ctx, server, 30*time.Second, version)
//	if l.Err == nil { err = hook.WriteCatalog(dir, l.Entry) }
package toolsync

import (
	"context"
	"encoding/json"
	"time"

	"github.com/toolwarden/toolwarden/internal/hook"
	"github.com/toolwarden/toolwarden/internal/catalog"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// Listed is what listing one server gave: its catalog entry, or why not.
type Listed struct {
	Server hook.Server
	Entry  *hook.CatalogEntry
	Err    error
}

// List starts s (a stdio command, or an HTTP session), reads its whole
// tools/list within timeout, and stops it. The entry's tools are the
// definitions as the server sent them, minus those toolwarden could not
// read (no name) or saw twice, as in the proxy.
func List(ctx context.Context, s hook.Server, timeout time.Duration, version string) Listed {
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
	return Listed{Server: s, Entry: &hook.CatalogEntry{
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
