package proxy

import (
	"encoding/json"
	"os"
	"sync"

	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// serverContexts holds what each upstream's calls are resolved against
// (its working directory, home, command-line directories and the client's
// roots it was told of), which every call carries to policy so that path
// rules judge the file the server will touch (serverspec.Spec.ServerContext).
type serverContexts struct {
	m sync.Map // upstream name -> *policy.ServerContext, replaced, never changed
}

// serverContext is the context a call to u carries.
func (p *Proxy) serverContext(u *upstream.Client) *policy.ServerContext {
	if x, ok := p.contexts.m.Load(u.Name()); ok {
		return x.(*policy.ServerContext)
	}
	x, _ := p.contexts.m.LoadOrStore(u.Name(), u.Spec().ServerContext(workingDir()))
	return x.(*policy.ServerContext)
}

// rootsAnswered notes the roots the client gave u (an answer to u's
// roots/list): u resolves relative paths against them from now on.
func (p *Proxy) rootsAnswered(u *upstream.Client, result json.RawMessage) {
	roots, ok := upstream.RootPaths(result)
	if !ok {
		return
	}
	for {
		old := p.serverContext(u)
		x := *old
		x.Roots = serverspec.WithRealPaths(roots)
		if p.contexts.m.CompareAndSwap(u.Name(), old, &x) {
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
