package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/sdk/proxy"
)

// serveFlags are the flags wrap and proxy share, and the set-up they share:
// both serve MCP in front of upstream servers and decide with one host.
type serveFlags struct {
	configs         cli.StringList
	requirements    cli.StringList
	approvals       string
	audit           string
	maxArgBytes     int
	approvalTimeout time.Duration
	quiet           bool
}

// newServeFlags makes the flag set of wrap or proxy with the shared flags
// registered; the command adds its own before parsing.
func newServeFlags(e *env, name, synopsis, about string) (*cli.Flags, *serveFlags) {
	fs := newCmdFlags(e, name, synopsis, about)
	var f serveFlags
	fs.Var(&f.configs, "config", "config file (repeatable; later files override earlier)")
	fs.Var(&f.requirements, "requirements", "requirements file an admin sets (repeatable; with /etc/codex/requirements.toml, /etc/toolwarden/requirements.toml and $TOOLWARDEN_REQUIREMENTS)")
	fs.StringVar(&f.approvals, "approvals", "", "persistent \"always\" approvals file (default: "+cli.DisplayApprovalsPath()+")")
	fs.StringVar(&f.audit, "audit", "", "append a JSON Lines record per decision to this file")
	fs.IntVar(&f.maxArgBytes, "max-arg-bytes", proxy.DefaultMaxArgumentBytes, "largest tools/call arguments accepted, in bytes")
	fs.DurationVar(&f.approvalTimeout, "approval-timeout", proxy.DefaultApprovalTimeout, "how long an approval prompt may stay unanswered before the call is denied")
	fs.BoolVar(&f.quiet, "quiet", false, "log only errors to stderr")
	return fs, &f
}

// startHost loads the config and builds the host the proxy decides with.
// The returned cleanup closes the host and the audit file.
func (f *serveFlags) startHost(ctx context.Context, e *env) (*host.Host, *config.Config, func(), error) {
	cfg, err := cli.LoadConfig(e.getenv, f.configs, f.requirements)
	if err != nil {
		return nil, nil, nil, err
	}
	settings := host.Defaults()
	path := f.approvals
	if path == "" {
		if path, err = cli.ApprovalsPath(); err != nil {
			return nil, nil, nil, err
		}
	}
	settings = settings.WithApprovalsFile(path)
	var closers []func()
	if f.audit != "" {
		af, err := os.OpenFile(f.audit, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, nil, err
		}
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
	if f.quiet {
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})).With("component", "toolwarden")
}

func (f *serveFlags) options(e *env) proxy.Options {
	return proxy.Defaults().
		WithServerInfo("toolwarden", cli.Version()).
		WithMaxArgumentBytes(f.maxArgBytes).
		WithApprovalTimeout(f.approvalTimeout).
		WithLogger(f.logger(e)).
		WithCatalog(listedCatalogDir(e))
}
