package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/proxy"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// serveFlags are the flags wrap and proxy share (parsed by cli.ParseWrap
// and cli.ParseProxy, which the hook reads agents' servers with too), and
// the set-up they share: both serve MCP in front of upstream servers and
// decide with one host.
type serveFlags struct{ *cli.ServeFlags }

// serveDefaults are the defaults of wrap's and proxy's limits.
var serveDefaults = cli.ServeDefaults{MaxArgBytes: proxy.DefaultMaxArgumentBytes, MaxResultBytes: proxy.DefaultMaxResultBytes, ApprovalTimeout: channel.DefaultTimeout}

// serve is what wrap and proxy share once their flags are parsed: it
// builds the host, has upstreams say which servers to serve with which
// options, and serves MCP on stdin/stdout until the client leaves or a
// signal comes, applying config changes as --no-watch allows. An error
// is reported as "toolwarden <command>: <err>".
func (f *serveFlags) serve(e *env, fs *cli.Flags, upstreams func(cfg *config.Config) ([]serverspec.Spec, proxy.Options, error)) int {
	watch := watchFlag(fs)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := localStore(ctx, f.StoreURL, f.Approvals, f.logger(e)) // localstore.go
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden %s: %v\n", fs.Name, err)
		return exitError
	}
	if st != nil {
		defer st.Close()
	}
	h, cfg, cleanup, err := f.startHostWith(ctx, e, withStore(st))
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden %s: %v\n", fs.Name, err)
		return exitError
	}
	defer cleanup()
	specs, opts, err := upstreams(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden %s: %v\n", fs.Name, err)
		return exitError
	}
	p := proxy.New(h, specs, opts)
	defer watch(ctx, e, f, h, p)()
	if err := p.Run(ctx, e.stdin, e.stdout); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintf(e.stderr, "toolwarden %s: %v\n", fs.Name, err)
		return exitError
	}
	return exitOK
}

// startHostWith loads the config and builds the host the proxy decides
// with, with more host settings (a shared store, serve's audit export)
// applied to the defaults when more is not nil. The returned cleanup
// closes the host and the audit file.
func (f *serveFlags) startHostWith(ctx context.Context, e *env, more func(host.Settings) host.Settings) (*host.Host, *config.Config, func(), error) {
	cfg, err := cli.LoadConfig(e.getenv, f.Configs, f.Requirements)
	if err != nil {
		return nil, nil, nil, err
	}
	settings := hostDefaults()
	if more != nil {
		settings = more(settings)
	}
	path := f.Approvals
	if path == "" {
		if path, err = cli.ApprovalsPath(); err != nil {
			return nil, nil, nil, err
		}
	}
	settings = settings.WithApprovalsFile(path)
	var closers []func()
	af, err := openAuditLog(e, f.Audit, cfg, func(msg string) { f.logger(e).Warn(msg) })
	if err != nil {
		return nil, nil, nil, err
	}
	if af != nil {
		closers = append(closers, func() { af.Close() })
		settings = settings.WithAuditLog(af)
	}
	h, err := host.New(ctx, cfg, settings)
	if err != nil {
		for _, c := range closers {
			c()
		}
		return nil, nil, nil, err
	}
	// A plugin that does not load fails closed and the config may mislead:
	// say so where the operator looks, not only in validate.
	log := f.logger(e)
	for _, w := range cfg.Warnings {
		log.Warn("config: " + w.Error())
	}
	for _, w := range h.Warnings() {
		log.Error("policy plugin did not load: every call it covers gets its on_error verdict (deny unless set); toolwarden validate reports it", "err", w)
	}
	cleanup := func() {
		_ = h.Close(context.Background())
		for _, c := range closers {
			c()
		}
	}
	return h, cfg, cleanup, nil
}

func (f *serveFlags) logger(e *env) *slog.Logger {
	level := slog.LevelInfo
	if f.Quiet {
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})).With("component", "toolwarden")
}

func (f *serveFlags) options(e *env) proxy.Options {
	return proxy.Defaults().
		WithServerInfo("toolwarden", cli.Version()).
		WithMaxArgumentBytes(f.MaxArgBytes).
		WithMaxResultBytes(f.MaxResultBytes).
		WithApprovalTimeout(f.ApprovalTimeout).
		WithLogger(f.logger(e)).
		WithCatalog(listedCatalogDir(e))
}
