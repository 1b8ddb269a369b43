package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"

	"github.com/toolwarden/toolwarden/sdk/proxy"
)

func init() {
	register(command{name: "wrap", summary: "run one stdio MCP server behind toolwarden (same tool names)", run: runWrap})
}

func runWrap(e *env, args []string) int {
	fs, pf := newServeFlags(e, "wrap", "wrap [--config F]... [--app NAME] [flags] -- CMD [ARGS...]",
		`Serves MCP on stdin/stdout in front of the stdio MCP server CMD: same tools, same
names, same definitions, but hidden tools are left out, every call is decided by
policy, and asks become approval prompts (MCP elicitation) in the client.`)
	app := fs.String("app", "", "the server's name for policy ([apps.<name>], [mcp_servers.<name>]); default: derived from the command")
	toolTimeout := fs.Duration("tool-timeout", 0, "per-call timeout (default: tool_timeout_sec of [mcp_servers.<app>], else 300s)")
	startupTimeout := fs.Duration("startup-timeout", 0, "timeout to start the server (default: startup_timeout_sec of [mcp_servers.<app>], else 30s)")
	watch := watchFlag(fs)
	if code, ok := fs.parse(args); !ok {
		return code
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return fs.usageError("no server command given (toolwarden wrap --app NAME -- CMD ARGS...)")
	}
	name := *app
	if name == "" {
		name = defaultAppName(rest[0], rest[1:])
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
	defer watch(ctx, e, pf, h, p)()
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
