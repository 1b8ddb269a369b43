package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/channel"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/serve"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/store"
	"github.com/toolwarden/toolwarden/internal/telemetry"
)

const serveSummary = "serve every [mcp_servers.*] to a team over streamable HTTP (<server>__<tool>)"

func init() {
	register(command{name: "serve", summary: serveSummary, run: runServe})
}

// serveCmdFlags are toolwarden serve's flags.
type serveCmdFlags struct {
	cli.ServeFlags
	Listen string
	Store  *string   // store.go
	ops    *opsFlags // serve_ops.go
}

func parseServe(e *env, args []string) (*cli.Flags, *serveCmdFlags, int, bool) {
	f := &serveCmdFlags{}
	fs := cli.NewFlags(e.stdout, e.stderr, "serve", serveSummary, "serve --listen ADDR [--config F]... [flags]",
		`Serves MCP over streamable HTTP at http://ADDR/mcp in front of every enabled
[mcp_servers.<name>] of the config (stdio servers it runs, streamable HTTP ones it
calls), each tool as <name>__<tool>, for every caller at once. Clients of protocol
2025-06-18 and 2025-11-25 get sessions (Mcp-Session-Id); 2026-07-28 clients are
served without one. Hidden tools are left out, every call is decided by policy,
asks become approval prompts (elicitation, or multi round-trip input requests).
Once it accepts connections it prints one line to stderr:
  toolwarden serve: listening on http://HOST:PORT/mcp`)
	fs.StringVar(&f.Listen, "listen", "", "address to listen on, host:port (port 0: any free port); default 127.0.0.1:8080")
	fs.Var(&f.Configs, "config", "config file (repeatable; later files override earlier; default: the usual config files)")
	fs.Var(&f.Requirements, "requirements", "requirements file an admin sets (repeatable)")
	fs.StringVar(&f.Approvals, "approvals", "", "keep \"always\" approvals in this file instead of a shared store (one replica only; not with --store)")
	f.Store = addStoreFlag(fs.FlagSet)
	fs.DurationVar(&f.ApprovalTimeout, "approval-timeout", channel.DefaultTimeout, "how long a call waits for an answer to its approval prompt, or in the team inbox, before it is denied")
	fs.StringVar(&f.Audit, "audit", "", "the decision log (default: [audit] path of the config, else <home>/.local/state/toolwarden/audit.jsonl; \"off\": none)")
	fs.BoolVar(&f.Quiet, "quiet", false, "log only errors to stderr")
	f.ops = addOpsFlags(fs, &f.ServeFlags)
	if code, ok := fs.ParseArgs(args); !ok {
		return fs, f, code, false
	}
	if code, ok := fs.NoArgs("servers come from [mcp_servers.*] of the config"); !ok {
		return fs, f, code, false
	}
	if err := f.ops.check(); err != nil {
		return fs, f, fs.UsageError("%v", err), false
	}
	return fs, f, exitOK, true
}

func runServe(e *env, args []string) int {
	_, f, code, ok := parseServe(e, args)
	if !ok {
		return code
	}
	if err := serveHTTP(e, f); err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "toolwarden serve: ") {
			msg = "toolwarden serve: " + msg
		}
		fmt.Fprintln(e.stderr, msg)
		return exitError
	}
	return exitOK
}

// serveHTTP runs the gateway until SIGINT or SIGTERM.
func serveHTTP(e *env, f *serveCmdFlags) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tel, err := telemetry.Setup(ctx, "toolwarden", cli.Version())
	if err != nil {
		return fmt.Errorf("OpenTelemetry (OTEL_* variables): %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = tel.Shutdown(sctx)
	}()
	sf := &serveFlags{&f.ServeFlags}
	log := sf.logger(e)
	st, err := serveStore(ctx, f, log)
	if err != nil {
		return err
	}
	var auditQ *store.AuditQueue
	if st != nil {
		defer st.Close()
		auditQ = st.AuditSink()
		defer closeAuditQueue(auditQ, log)
	}
	h, cfg, cleanup, err := sf.startHostWith(ctx, e, func(s host.Settings) host.Settings {
		if sink := serve.AuditExport(tel, auditQ); sink != nil {
			s = s.WithAuditExport(sink)
		}
		if st != nil {
			s = s.WithStore(st)
		}
		return s
	})
	if err != nil {
		return err
	}
	defer cleanup()
	specs, err := serveSpecs(cfg, e)
	if err != nil {
		return err
	}
	if len(specs) == 0 {
		return errors.New("no enabled [mcp_servers.<name>] in the config; nothing to serve (use --config)")
	}
	opts, err := serveOptions(ctx, cfg, f, log, tel)
	if err != nil {
		return err
	}
	opts.Store = st
	opts.SpecsOf = func(cfg *config.Config) ([]serverspec.Spec, error) { return serveSpecs(cfg, e) }
	addr := opts.Listen
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	if opts.ResourceURL == "" {
		// The address bound, not the one asked for: port 0 is a real
		// port by now, and the 401 challenge must name it.
		opts.ResourceURL = "http://" + l.Addr().String() + "/mcp"
	}
	srv := serve.New(h, specs, opts)
	front := startFront(srv, l, f.ops, log)
	fmt.Fprintf(e.stderr, "toolwarden serve: listening on http://%s/mcp\n", l.Addr())
	if err := srv.Start(ctx); err != nil {
		log.Warn("some upstream servers did not start; their tools appear once they do", "err", err)
	}
	defer watchServe(ctx, e, sf, h, srv.Reload)()
	return front.untilSignal(ctx, e)
}

// serveOptions reads the [serve] table (a flag wins over it) into the
// gateway's options: where to listen, who may call (tokens file, OIDC),
// the session secret and the limits. Listening beyond loopback without
// authentication is refused.
func serveOptions(ctx context.Context, cfg *config.Config, f *serveCmdFlags, log *slog.Logger, tel *telemetry.Telemetry) (serve.Options, error) {
	sc := cfg.Serve
	o := serve.Options{
		Telemetry:       tel,
		Listen:          sc.Listen,
		MaxRequestBytes: int64(sc.MaxRequestKiB) << 10,
		MaxResultBytes:  sc.MaxResultKiB << 10,
		RatePerSecond:   sc.RateLimit.CallsPerSecond,
		RateBurst:       sc.RateLimit.Burst,
		IdleSessionTTL:  sc.IdleSessionTTL,
		ApprovalTimeout: f.ApprovalTimeout,
		Version:         cli.Version(),
		Logger:          log,
	}
	if f.Listen != "" {
		o.Listen = f.Listen
	}
	if o.Listen == "" {
		o.Listen = "127.0.0.1:8080"
	}
	if err := identity.CheckListen(o.Listen, sc.Auth.Configured()); err != nil {
		return o, err
	}
	auth, err := serveAuth(ctx, sc.Auth)
	if err != nil {
		return o, err
	}
	o.Auth = auth
	// The resource clients address: public_url when a load balancer or
	// TLS terminator stands in front, else OIDC's audience, else (set
	// once bound) this listener's URL.
	switch {
	case sc.PublicURL != "":
		o.ResourceURL = sc.PublicURL
	case sc.Auth.OIDC != nil && sc.Auth.OIDC.Audience != "":
		o.ResourceURL = sc.Auth.OIDC.Audience
	}
	if sc.SessionSecretFile != "" {
		secret, err := os.ReadFile(sc.SessionSecretFile)
		if err != nil {
			return o, fmt.Errorf("[serve] session_secret_file: %w", err)
		}
		if secret = bytes.TrimSpace(secret); len(secret) < 32 {
			return o, fmt.Errorf("[serve] session_secret_file %s: the secret is %d bytes; use at least 32 random bytes (for example: openssl rand -hex 32 > %s)", sc.SessionSecretFile, len(secret), sc.SessionSecretFile)
		}
		o.SessionSecret = secret
	}
	return o, nil
}

// serveAuth is the authenticator [serve.auth] configures: the tokens
// file, OIDC, or both (the first that accepts a request); nil when none
// is configured (every caller is the local principal, on loopback only).
func serveAuth(ctx context.Context, a config.ServeAuth) (identity.Authenticator, error) {
	var as []identity.Authenticator
	if a.TokensFile != "" {
		t, err := identity.LoadTokens(a.TokensFile)
		if err != nil {
			return nil, fmt.Errorf("[serve.auth] tokens_file: %w", err)
		}
		as = append(as, t)
	}
	if o := a.OIDC; o != nil {
		v, err := identity.NewOIDC(ctx, identity.OIDCConfig{Issuer: o.Issuer, Audience: o.Audience, JWKSURL: o.JWKSURL, PrincipalClaim: o.PrincipalClaim, GroupsClaim: o.GroupsClaim})
		if err != nil {
			return nil, fmt.Errorf("[serve.auth.oidc]: %w", err)
		}
		as = append(as, v)
	}
	switch len(as) {
	case 0:
		return nil, nil
	case 1:
		return as[0], nil
	}
	return identity.Chain(as...), nil
}

// serveSpecs turns the enabled [mcp_servers.*] into upstream specs for
// serve, as proxy does (enabledSpecs).
func serveSpecs(cfg *config.Config, e *env) ([]serverspec.Spec, error) {
	return enabledSpecs(cfg, e, "serve")
}
