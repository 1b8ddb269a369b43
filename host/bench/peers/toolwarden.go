package peers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/plugins"
)

// writeFile is the definition the call's tool has in tools/list. The proxy
// parses it once, when it reads the list, so Check gets it parsed; the
// call's arguments come as raw bytes every time.
const writeFile = `{"name":"write_file","description":"Write a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}}},"annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":false}}`

// baseConfig asks on destructive tools (auto mode). The session has read
// private data and untrusted content, so trifecta takes its slow path
// (reads the labels and asks) rather than its early exit.
const baseConfig = `
[apps.fs]
destructive_enabled = true
default_tools_approval_mode = "auto"
[apps.fs.hints]
reads_private_data = true
sees_untrusted_content = true
can_exfiltrate = true
`

const (
	trifectaConfig = "\n[policies.trifecta]\nbuiltin = \"trifecta\"\n"
	argguardConfig = "\n[policies.argguard]\nbuiltin = \"argguard\"\n" +
		`config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }, { tool = "*", arg = "command", ask_regex = 'rm\s+-rf' }]` + "\n"
)

// Variants are the toolwarden configurations measured.
var Variants = []struct{ Name, Config string }{
	{"none", baseConfig},
	{"trifecta", baseConfig + trifectaConfig},
	{"argguard", baseConfig + argguardConfig},
	{"both", baseConfig + trifectaConfig + argguardConfig},
}

// Toolwarden is a host for one variant with the call's tool parsed.
type Toolwarden struct {
	H    *host.Host
	tool *host.Tool
	dir  string
}

// NewToolwarden builds the host (plugins compiled into a private cache
// dir), pins the tool and labels session "s" with one observed call.
func NewToolwarden(ctx context.Context, toml string, s host.Settings) (*Toolwarden, error) {
	cfg, err := host.ParseConfig("peers.toml", []byte(toml))
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "toolwarden-peers-cache-")
	if err != nil {
		return nil, err
	}
	h, err := host.New(ctx, cfg, s.WithPluginCacheDir(dir).WithBuiltins(plugins.Modules()))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if w := h.Warnings(); len(w) > 0 {
		h.Close(ctx)
		os.RemoveAll(dir)
		return nil, fmt.Errorf("config warnings: %v", w)
	}
	tl, err := host.ParseTool([]byte(writeFile))
	if err != nil {
		return nil, err
	}
	t := &Toolwarden{H: h, tool: tl, dir: dir}
	t.Prime(ctx, "s")
	return t, nil
}

// Prime pins the tool for session and labels it (one Check and Observe).
func (t *Toolwarden) Prime(ctx context.Context, session string) {
	c := t.call(session, argsOf(Call))
	d := t.H.Check(ctx, c)
	t.H.Observe(ctx, c, &d, host.Result{Text: "ok"})
}

func (t *Toolwarden) call(session string, args json.RawMessage) host.Call {
	return host.Call{Session: session, Server: "fs", Tool: t.tool, Arguments: args}
}

// Decide checks the call's arguments (raw bytes) in session.
func (t *Toolwarden) Decide(ctx context.Context, session string, args json.RawMessage) string {
	return t.H.Check(ctx, t.call(session, args)).Decision.String()
}

// Close closes the host and removes its cache dir.
func (t *Toolwarden) Close() {
	t.H.Close(context.Background())
	os.RemoveAll(t.dir)
}

// ArgsOf returns the raw "arguments" bytes of a call, as a proxy has them
// after reading the tools/call request's envelope.
func ArgsOf(call []byte) json.RawMessage { return argsOf(call) }

func argsOf(call []byte) json.RawMessage {
	var env struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(call, &env); err != nil {
		panic(err)
	}
	return env.Arguments
}
