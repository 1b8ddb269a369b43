package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/host"
)

// upstream is one server connection and the catalog of its tools: each
// definition parsed once when a list brings it, keyed by name, shared by
// every session's client of the connection.
type upstream struct {
	name  string
	inner MCPClient

	mu    sync.RWMutex
	tools map[string]*entry
	// stale is set by notifications/tools/list_changed: the next call
	// reads the list again before it is decided.
	stale atomic.Bool
	// relist serializes the lists a call makes on its own.
	relist sync.Mutex
}

// entry is one tool as the server listed it, and as policy reads it.
type entry struct {
	def  mcp.Tool
	raw  []byte
	tool *host.Tool
}

func newUpstream(name string, c MCPClient) *upstream {
	u := &upstream{name: name, inner: c, tools: map[string]*entry{}}
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			u.stale.Store(true)
		}
	})
	return u
}

// parse reads the definitions of a list, reusing the parse of any
// definition that has not changed. A definition that cannot be read (no
// name, or one mcp-go cannot encode) is left out: it could not be decided.
func (u *upstream) parse(defs []mcp.Tool) map[string]*entry {
	out := make(map[string]*entry, len(defs))
	u.mu.RLock()
	old := u.tools
	u.mu.RUnlock()
	for i := range defs {
		raw, err := json.Marshal(defs[i])
		if err != nil {
			continue
		}
		if e := old[defs[i].Name]; e != nil && bytes.Equal(e.raw, raw) {
			out[e.tool.Name] = &entry{def: defs[i], raw: e.raw, tool: e.tool}
			continue
		}
		t, err := host.ParseTool(raw)
		if err != nil {
			continue
		}
		out[t.Name] = &entry{def: defs[i], raw: raw, tool: t}
	}
	return out
}

// replace makes a full list the catalog.
func (u *upstream) replace(tools map[string]*entry) {
	u.mu.Lock()
	u.tools = tools
	u.mu.Unlock()
}

// merge adds one page of a list to the catalog.
func (u *upstream) merge(tools map[string]*entry) {
	u.mu.Lock()
	next := make(map[string]*entry, len(u.tools)+len(tools))
	for k, v := range u.tools {
		next[k] = v
	}
	for k, v := range tools {
		next[k] = v
	}
	u.tools = next
	u.mu.Unlock()
}

// lookup returns the tool named name, reading the list first when none was
// read yet, when the server said it changed, or when the name is not in
// it.
func (u *upstream) lookup(ctx context.Context, name string) (*entry, error) {
	if !u.stale.Load() {
		u.mu.RLock()
		e := u.tools[name]
		u.mu.RUnlock()
		if e != nil {
			return e, nil
		}
	}
	if err := u.refresh(ctx); err != nil {
		return nil, err
	}
	u.mu.RLock()
	defer u.mu.RUnlock()
	return u.tools[name], nil
}

// refresh reads the whole list again.
func (u *upstream) refresh(ctx context.Context) error {
	u.relist.Lock()
	defer u.relist.Unlock()
	u.stale.Store(false)
	res, err := u.inner.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		u.stale.Store(true)
		return err
	}
	u.replace(u.parse(res.Tools))
	return nil
}
