package proxy

import (
	"strings"
	"sync"
)

// resourceRoutes remembers, in proxy mode, which server listed which
// resource URI and which resource template, so that a URI the client
// reads, subscribes to or completes goes to the server that listed it and
// to no other: a URI is an address, and can carry private data (a path, a
// query, a token) that another server must not see.
//
// A URI routes to the first server (in config order) that listed it in
// resources/list; else to the server with the longest template prefix it
// starts with. A template's prefix is its literal part up to the first
// "{" ("demo://resource/dynamic/text/" for
// "demo://resource/dynamic/text/{id}"); a template with no variable
// matches only itself, and one whose prefix names no scheme ("{+uri}",
// "{scheme}://x") routes nothing, as it would claim every URI.
type resourceRoutes struct {
	order []string // the servers, in config order

	mu     sync.RWMutex
	listed map[string]*listing // by server
}

// listing is what one server last listed.
type listing struct {
	uris      map[string]struct{}
	templates []string
}

func newResourceRoutes(servers []string) *resourceRoutes {
	return &resourceRoutes{order: servers, listed: map[string]*listing{}}
}

// setResources records the URIs a server listed, replacing what it listed
// before.
func (r *resourceRoutes) setResources(server string, uris []string) {
	set := make(map[string]struct{}, len(uris))
	for _, u := range uris {
		set[u] = struct{}{}
	}
	r.mu.Lock()
	l := r.of(server)
	l.uris = set
	r.mu.Unlock()
}

// setTemplates records the URI templates a server listed, replacing what
// it listed before.
func (r *resourceRoutes) setTemplates(server string, templates []string) {
	r.mu.Lock()
	l := r.of(server)
	l.templates = templates
	r.mu.Unlock()
}

// of is server's listing; r.mu is held for writing.
func (r *resourceRoutes) of(server string) *listing {
	l := r.listed[server]
	if l == nil {
		l = &listing{}
		r.listed[server] = l
	}
	return l
}

// route returns the server a URI goes to, or "" when no server listed it.
func (r *resourceRoutes) route(uri string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, s := range r.order {
		if l := r.listed[s]; l != nil {
			if _, ok := l.uris[uri]; ok {
				return s
			}
		}
	}
	best, bestLen := "", -1
	for _, s := range r.order {
		l := r.listed[s]
		if l == nil {
			continue
		}
		for _, t := range l.templates {
			if n, ok := templateMatch(t, uri); ok && n > bestLen {
				best, bestLen = s, n
			}
		}
	}
	return best
}

// templateMatch reports whether uri falls under template (see
// resourceRoutes), and how long the matching literal prefix is.
func templateMatch(template, uri string) (int, bool) {
	i := strings.IndexByte(template, '{')
	if i < 0 {
		return len(template), uri == template
	}
	prefix := template[:i]
	if !strings.Contains(prefix, ":") {
		return 0, false
	}
	return len(prefix), strings.HasPrefix(uri, prefix)
}

// promptRoute splits a namespaced prompt name, <server>__<prompt>, into
// its server (the longest server name that is a prefix) and the name the
// server knows it by. ok is false when no server's prefix matches.
func promptRoute(servers []string, name string) (server, prompt string, ok bool) {
	for _, s := range servers {
		p := s + Separator
		if strings.HasPrefix(name, p) && len(name) > len(p) && len(s) > len(server) {
			server, prompt, ok = s, name[len(p):], true
		}
	}
	return server, prompt, ok
}
