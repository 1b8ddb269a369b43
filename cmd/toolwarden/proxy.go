package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/proxy"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

func init() {
	register(command{name: "proxy", summary: cli.ProxySummary, run: runProxy})
}

func runProxy(e *env, args []string) int {
	// The hook reads an agent's `toolwarden proxy` server with this parser
	// too, to see which requirements bind it.
	fs, sf, code, ok := cli.ParseProxy(e.stdout, e.stderr, serveDefaults, args)
	if !ok {
		return code
	}
	pf := &serveFlags{sf}
	return pf.serve(e, fs, func(cfg *config.Config) ([]serverspec.Spec, proxy.Options, error) {
		specs, err := proxySpecs(cfg, e)
		if err != nil {
			return nil, proxy.Options{}, err
		}
		if len(specs) == 0 {
			return nil, proxy.Options{}, errors.New("no enabled [mcp_servers.<name>] in the config; nothing to serve (use --config, or toolwarden wrap for one server)")
		}
		return specs, pf.options(e).WithNamespace(true), nil
	})
}

// proxySpecs turns the enabled [mcp_servers.*] into upstream specs for
// proxy (see enabledSpecs).
func proxySpecs(cfg *config.Config, e *env) ([]serverspec.Spec, error) {
	return enabledSpecs(cfg, e, "proxy")
}

// enabledSpecs turns the enabled [mcp_servers.*] into upstream specs, in
// name order, for the command named (proxy or serve, which serve the same
// servers). A server that cannot be set up (say, its bearer token variable
// is unset) is skipped with a warning, unless it is required = true.
func enabledSpecs(cfg *config.Config, e *env, command string) ([]serverspec.Spec, error) {
	names := make([]string, 0, len(cfg.Servers))
	for n := range cfg.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	var specs []serverspec.Spec
	for _, n := range names {
		s := cfg.Servers[n]
		if !config.Bool(s.Enabled, true) {
			continue
		}
		sp, err := serverspec.FromConfig(s, e.getenv)
		if err != nil {
			if s.Required {
				return nil, err
			}
			fmt.Fprintf(e.stderr, "toolwarden %s: skipping server %s: %v\n", command, n, err)
			continue
		}
		sp.Stderr = &prefixWriter{w: e.stderr, prefix: []byte("[" + n + "] ")}
		specs = append(specs, sp)
	}
	return specs, nil
}

// prefixWriter writes each line of a server's stderr with the server's
// name in front, so several servers' logs stay readable.
type prefixWriter struct {
	mu      sync.Mutex
	w       io.Writer
	prefix  []byte
	partial []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(b)
	data := append(p.partial, b...)
	p.partial = nil
	var out []byte
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		out = append(out, p.prefix...)
		out = append(out, data[:i+1]...)
		data = data[i+1:]
	}
	if len(data) > 0 {
		p.partial = append([]byte(nil), data...)
	}
	if len(out) > 0 {
		if _, err := p.w.Write(out); err != nil {
			return n, err
		}
	}
	return n, nil
}
