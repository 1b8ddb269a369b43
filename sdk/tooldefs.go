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

// upstream is one server connection and its tool definitions: each
// parsed once when a list brings it, keyed by name, shared by every
// session's client of the connection.
type upstream struct {
	name  string
	inner MCPClient
	toolDefs
	// stale is set by notifications/tools/list_changed: the next call
	// reads the list again before it is decided.
	stale atomic.Bool
	// relist serializes the lists a call makes on its own.
	relist sync.Mutex
}

// toolDefs is a server's tool definitions by name, each parsed once (not
// the on-disk tool catalog of internal/catalog, which hooks read).
type toolDefs struct {
	mu    sync.RWMutex
	tools map[string]*entry
	// lists counts the full lists read, so that calls waiting to list
	// again can see one was read meanwhile.
	lists atomic.Uint64
}

// entry is one tool as policy reads it, and the encoding it was parsed
// from (to see whether a later list changed it).
type entry struct {
	raw  []byte
	tool *host.Tool
}

func newUpstream(name string, c MCPClient) *upstream {
	u := &upstream{name: name, inner: c, toolDefs: toolDefs{tools: map[string]*entry{}}}
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
func (u *toolDefs) parse(defs []mcp.Tool) map[string]*entry {
	out := make(map[string]*entry, len(defs))
	u.mu.RLock()
	old := u.tools
	u.mu.RUnlock()
	seen := make(map[string]bool, len(defs))
	for i := range defs {
		name := defs[i].Name
		if seen[name] {
			// The first of two tools listed under one name is the one the
			// agent is shown (see guarded.filter), so it alone is decided:
			// when it cannot be read, the name is left out altogether.
			continue
		}
		seen[name] = true
		if e := parseDef(old, defs[i]); e != nil {
			out[name] = e
		}
	}
	return out
}

// parseDef parses one definition, reusing old's parse when it is the same.
func parseDef(old map[string]*entry, def mcp.Tool) *entry {
	raw, err := json.Marshal(def)
	if err != nil {
		return nil
	}
	if e := old[def.Name]; e != nil && bytes.Equal(e.raw, raw) {
		return e
	}
	t, err := host.ParseTool(raw)
	if err != nil || t.Name != def.Name {
		return nil
	}
	return &entry{raw: raw, tool: t}
}

// get returns def parsed, reusing the parse when it is unchanged.
func (u *toolDefs) get(def mcp.Tool) *entry {
	u.mu.RLock()
	e := u.tools[def.Name]
	u.mu.RUnlock()
	if e != nil {
		if raw, err := json.Marshal(def); err == nil && bytes.Equal(raw, e.raw) {
			return e
		}
	}
	e = parseDef(nil, def)
	if e != nil {
		u.merge(map[string]*entry{def.Name: e})
	}
	return e
}

// replace makes a full list the definitions.
func (u *toolDefs) replace(tools map[string]*entry) {
	u.mu.Lock()
	u.tools = tools
	u.mu.Unlock()
	u.lists.Add(1)
}

// merge adds one page of a list to the definitions.
func (u *toolDefs) merge(tools map[string]*entry) {
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
	seen := u.lists.Load()
	u.relist.Lock()
	defer u.relist.Unlock()
	if u.lists.Load() != seen && !u.stale.Load() {
		return nil // listed while this call waited
	}
	u.stale.Store(false)
	res, err := u.inner.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		u.stale.Store(true)
		return err
	}
	u.replace(u.parse(res.Tools))
	return nil
}
