package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/config"
)

// Reload applies cfg to the proxy's host at run time (see host.Reload):
// the session keeps its approvals, pins and labels, and the next decision
// follows cfg. When the tools the client would be listed now differ from
// what it was last listed, the client is sent
// notifications/tools/list_changed, so that it lists again. An invalid cfg
// changes nothing and Reload says why.
//
// Only policy changes apply: the upstreams (their commands, URLs, timeouts,
// which servers there are) stay as the proxy started them.
func (p *Proxy) Reload(ctx context.Context, cfg *config.Config) error {
	if err := p.h.Reload(ctx, cfg); err != nil {
		return err
	}
	p.PolicyChanged(ctx)
	return nil
}

// PolicyChanged tells the proxy that its host now decides by another
// policy (a Reload made on the host directly): when the tools the client
// would be listed changed, the client is sent
// notifications/tools/list_changed. It reports whether it was.
func (p *Proxy) PolicyChanged(ctx context.Context) bool {
	last, ok := p.listed.get()
	if !ok {
		return false // never listed: the client's first list will be the new one
	}
	if bytes.Equal(last, p.renderTools(ctx)) {
		return false
	}
	p.mu.RLock()
	srv := p.srv
	p.mu.RUnlock()
	if srv == nil {
		return false
	}
	srv.SendNotificationToAllClients(mcp.MethodNotificationToolsListChanged, nil)
	p.log.Info("the policy changed what the client sees; sent notifications/tools/list_changed")
	return true
}

// lastListed is the tools array of the last tools/list answer the client
// got: what it believes it may call.
type lastListed struct {
	mu    sync.Mutex
	tools json.RawMessage
	set   bool
}

func (l *lastListed) remember(tools json.RawMessage) {
	l.mu.Lock()
	l.tools, l.set = tools, true
	l.mu.Unlock()
}

func (l *lastListed) get() (json.RawMessage, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tools, l.set
}
