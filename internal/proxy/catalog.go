package proxy

import (
	"encoding/json"
	"time"

	"github.com/toolwarden/toolwarden/internal/catalog"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// WithCatalog makes the proxy write each upstream's tool list, as listed,
// to the tool catalog in dir (one file per server name and identity, see
// `toolwarden tools list`), where agent hooks find the annotations their events lack. The
// write happens in the background; a list never waits for it. "" turns it
// off (the default).
func (o Options) WithCatalog(dir string) Options {
	o.catalog = nil
	if dir != "" {
		o.catalog = catalog.NewWriter(dir)
	}
	return o
}

// listedToCatalog hands an upstream's current tool list to the catalog
// writer, if there is one.
func (p *Proxy) listedToCatalog(u *upstream.Client) {
	w := p.opts.catalog
	if w == nil {
		return
	}
	tools := u.Tools()
	raws := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		raws[i] = t.Raw
	}
	mode := "toolwarden wrap: "
	if p.opts.namespace {
		mode = "toolwarden proxy: "
	}
	// The entry names the server as it was really started (wrap's upstream,
	// in wrap's folder with wrap's environment), so that a hook believes it
	// only for that very server, never for another of the same name.
	e := &catalog.Entry{Server: u.Name(), Identity: u.Spec().Identity(), Source: mode + u.Spec().Describe(), ListedAt: time.Now().UTC(), Tools: raws}
	w.Put(e, func(err error) {
		p.log.Warn("tool catalog not written (hooks see no annotations for this server)", "server", u.Name(), "err", err)
	})
}

// flushCatalog waits for the catalog writes under way, so that a short
// session still leaves its list behind.
func (p *Proxy) flushCatalog() {
	if w := p.opts.catalog; w != nil {
		w.Flush()
	}
}
