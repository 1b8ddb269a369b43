package proxy

import (
	"encoding/json"
	"os"
	"sync"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// pathContexts holds what is known of each upstream's paths (its working
// directory, home, command-line directories and the client's roots it was
// told of), which every call carries to policy so that path rules judge the
// file the server will touch (upstream.Spec.PathContext).
type pathContexts struct {
	m sync.Map // upstream name -> *host.ServerContext, replaced, never changed
}

// pathContext is the context a call to u carries.
func (p *Proxy) pathContext(u *upstream.Client) *host.ServerContext {
	if x, ok := p.paths.m.Load(u.Name()); ok {
		return x.(*host.ServerContext)
	}
	x, _ := p.paths.m.LoadOrStore(u.Name(), u.Spec().PathContext(workingDir()))
	return x.(*host.ServerContext)
}

// rootsAnswered notes the roots the client gave u (an answer to u's
// roots/list): u resolves relative paths against them from now on.
func (p *Proxy) rootsAnswered(u *upstream.Client, result json.RawMessage) {
	roots, ok := upstream.RootPaths(result)
	if !ok {
		return
	}
	for {
		old := p.pathContext(u)
		x := *old
		x.Roots = upstream.WithRealPaths(roots)
		if p.paths.m.CompareAndSwap(u.Name(), old, &x) {
			return
		}
	}
}

// workingDir is toolwarden's working directory, which a stdio upstream
// without a configured cwd inherits; "" (unknown) if it cannot be read.
func workingDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	return wd
}
