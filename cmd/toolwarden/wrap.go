package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/sdk/proxy"
)

func init() {
	register(command{name: "wrap", summary: "run one stdio MCP server behind toolwarden (same tool names)", run: runWrap})
}

// proxyFlags are the flags wrap and proxy share.
type proxyFlags struct {
	configs         stringList
	approvals       string
	audit           string
	maxArgBytes     int
	approvalTimeout time.Duration
	quiet           bool
}

func (f *proxyFlags) register(fs *flag.FlagSet) {
	fs.Var(&f.configs, "config", "config file (repeatable; later files override earlier)")
	fs.StringVar(&f.approvals, "approvals", "", "persistent \"always\" approvals file (default: "+displayApprovalsPath()+")")
	fs.StringVar(&f.audit, "audit", "", "append a JSON Lines record per decision to this file")
	fs.IntVar(&f.maxArgBytes, "max-arg-bytes", proxy.DefaultMaxArgumentBytes, "largest tools/call arguments accepted, in bytes")
	fs.DurationVar(&f.approvalTimeout, "approval-timeout", proxy.DefaultApprovalTimeout, "how long an approval prompt may stay unanswered before the call is denied")
	fs.BoolVar(&f.quiet, "quiet", false, "log only errors to stderr")
}

// defaultApprovalsPath is where "always" approvals live unless --approvals
// says otherwise: <user config dir>/toolwarden/approvals.json.
func defaultApprovalsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user config directory for the approvals file (%v); pass --approvals", err)
	}
	return filepath.Join(dir, "toolwarden", "approvals.json"), nil
}

func displayApprovalsPath() string {
	p, err := defaultApprovalsPath()
	if err != nil {
		return "<user config dir>/toolwarden/approvals.json"
	}
	return p
}

// startHost loads the config and builds the host the proxy decides with.
// The returned cleanup closes the host and the audit file.
func (f *proxyFlags) startHost(ctx context.Context, e *env) (*host.Host, *config.Config, func(), error) {
	cfg, err := loadConfig(f.configs)
	if err != nil {
		return nil, nil, nil, err
	}
	settings := host.Defaults()
	path := f.approvals
	if path == "" {
		if path, err = defaultApprovalsPath(); err != nil {
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
	cleanup := func() {
		_ = h.Close(context.Background())
		for _, c := range closers {
			c()
		}
	}
	return h, cfg, cleanup, nil
}

func (f *proxyFlags) logger(e *env) *slog.Logger {
	level := slog.LevelInfo
	if f.quiet {
		level = slog.LevelError
	}
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level})).With("component", "toolwarden")
}

func (f *proxyFlags) options(e *env) proxy.Options {
	return proxy.Defaults().
		WithServerInfo("toolwarden", version).
		WithMaxArgumentBytes(f.maxArgBytes).
		WithApprovalTimeout(f.approvalTimeout).
		WithLogger(f.logger(e))
}

func runWrap(e *env, args []string) int {
	fs := flag.NewFlagSet("wrap", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var pf proxyFlags
	pf.register(fs)
	app := fs.String("app", "", "the server's name for policy ([apps.<name>], [mcp_servers.<name>]); default: derived from the command")
	toolTimeout := fs.Duration("tool-timeout", 0, "per-call timeout (default: tool_timeout_sec of [mcp_servers.<app>], else 300s)")
	startupTimeout := fs.Duration("startup-timeout", 0, "timeout to start the server (default: startup_timeout_sec of [mcp_servers.<app>], else 30s)")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: toolwarden wrap [--config F]... [--app NAME] [flags] -- CMD [ARGS...]")
		fmt.Fprintln(e.stderr)
		fmt.Fprintln(e.stderr, "Serves MCP on stdin/stdout in front of the stdio MCP server CMD: same tools, same")
		fmt.Fprintln(e.stderr, "names, same definitions, but hidden tools are left out, every call is decided by")
		fmt.Fprintln(e.stderr, "policy, and asks become approval prompts (MCP elicitation) in the client.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprintln(e.stderr, "toolwarden wrap: no server command given (toolwarden wrap --app NAME -- CMD ARGS...)")
		return exitUsage
	}
	name := *app
	if name == "" {
		name = deriveApp(rest[0], rest[1:])
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	h, cfg, cleanup, err := pf.startHost(ctx, e)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden wrap:", err)
		return exitError
	}
	defer cleanup()

	spec := proxy.Upstream{Name: name, Command: rest[0], Args: rest[1:], Stderr: e.stderr}
	if s, ok := cfg.Servers[name]; ok {
		spec.StartupTimeout = s.StartupTimeout()
		spec.ToolTimeout = s.ToolTimeout()
		spec.ClientCapabilities = s.ClientCapabilities
	}
	if *toolTimeout > 0 {
		spec.ToolTimeout = *toolTimeout
	}
	if *startupTimeout > 0 {
		spec.StartupTimeout = *startupTimeout
	}
	opts := pf.options(e).WithWaitForUpstreams(true)
	p := proxy.New(h, []proxy.Upstream{spec}, opts)
	if err := p.Run(ctx, e.stdin, e.stdout); err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(e.stderr, "toolwarden wrap:", err)
		return exitError
	}
	return exitOK
}

// launchers are commands that run another program named by their first
// non-flag argument; the server is named after that program instead.
var launchers = map[string]bool{
	"npx": true, "bunx": true, "pnpx": true, "uvx": true, "pipx": true, "node": true, "deno": true,
	"bun": true, "python": true, "python3": true, "uv": true, "go": true, "docker": true, "podman": true,
}

var (
	versionSuffix = regexp.MustCompile(`@[^/@]*$`)
	notNameChar   = regexp.MustCompile(`[^A-Za-z0-9_-]+`)
)

// deriveApp names a wrapped server after its command: the basename, or for
// a launcher (npx, uvx, node, docker...) the package or script it runs,
// minus scope, version, extension and mcp/server affixes.
// "npx -y @modelcontextprotocol/server-filesystem ~/src" is "filesystem".
func deriveApp(command string, args []string) string {
	name := filepath.Base(command)
	if launchers[strings.TrimSuffix(name, ".exe")] {
		for _, a := range args {
			if strings.HasPrefix(a, "-") || a == "run" || a == "dlx" || a == "x" || a == "tool" {
				continue
			}
			name = a
			break
		}
	}
	name = versionSuffix.ReplaceAllString(name, "")
	name = filepath.Base(name)
	name = strings.TrimSuffix(name, filepath.Ext(name))
	for _, p := range []string{"mcp-server-", "server-", "mcp-"} {
		if n, ok := strings.CutPrefix(name, p); ok && n != "" {
			name = n
			break
		}
	}
	for _, s := range []string{"-mcp-server", "-mcp", "-server"} {
		if n, ok := strings.CutSuffix(name, s); ok && n != "" {
			name = n
			break
		}
	}
	name = strings.Trim(notNameChar.ReplaceAllString(name, "_"), "_")
	if name == "" {
		return "server"
	}
	return name
}
