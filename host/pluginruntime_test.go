package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

const argguardEtc = "\n[policies.argguard]\nbuiltin = \"argguard\"\n" + `config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }]` + "\n"

// Hosts built one after another on one plugin runtime (a warm hook
// process) each decide with their own plugins: closing one host leaves
// the runtime and the next host working, and a host never decides with
// another's plugin config.
func TestHostsOnASharedPluginRuntimeDecideApart(t *testing.T) {
	ctx := context.Background()
	rt, err := host.NewPluginRuntime(ctx, host.Defaults().WithPluginCacheDir(pluginCache))
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	tl := tool(t, writeFile)
	decide := func(policies, path string) host.Decision {
		t.Helper()
		cfg, err := config.LoadBytes("shared.toml", []byte(benchConfig+policies))
		if err != nil {
			t.Fatal(err)
		}
		h, err := host.New(ctx, cfg, host.Defaults().WithPluginRuntime(rt))
		if err != nil {
			t.Fatal(err)
		}
		if ws := h.Warnings(); len(ws) > 0 {
			t.Fatal(ws)
		}
		defer func() {
			if err := h.Close(ctx); err != nil {
				t.Fatal(err)
			}
		}()
		return h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: tl, Arguments: json.RawMessage(`{"path":"` + path + `"}`)})
	}
	for i := range 3 {
		if d := decide(argguardEtc, "/etc/passwd"); d.Decision != host.Deny {
			t.Fatalf("host %d: %v %+v", i, d.Decision, d.Reasons)
		}
	}
	// The same binary with another config: /etc is now allowed by it.
	home := "\n[policies.argguard]\nbuiltin = \"argguard\"\n" + `config.rules = [{ tool = "*", arg = "path", deny_glob = "/home/**" }]` + "\n"
	if d := decide(home, "/etc/passwd"); d.Decision == host.Deny {
		t.Fatalf("the other config's rule applied: %+v", d.Reasons)
	}
	if d := decide(home, "/home/me"); d.Decision != host.Deny {
		t.Fatalf("%v %+v", d.Decision, d.Reasons)
	}
	if d := decide("", "/etc/passwd"); d.Decision == host.Deny {
		t.Fatalf("a host without plugins got one: %+v", d.Reasons)
	}
}

// Hosts sharing a plugin runtime each get their own plugins' log lines:
// a host's logger (Settings.WithLogger) receives its plugins' messages,
// and neither the other host's logger nor the runtime's does.
func TestHostsOnASharedPluginRuntimeLogApart(t *testing.T) {
	ctx := context.Background()
	var rtLog bytes.Buffer
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: pluginCache, Logger: slog.New(slog.NewTextHandler(&rtLog, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	chatty := testkit.Path("internal", "plugin", "testdata", "wat", "chatty.wasm")
	cfg, err := config.LoadBytes("shared.toml", []byte(fmt.Sprintf("%s\n[policies.chatty]\nwasm = %q\n", benchConfig, chatty)))
	if err != nil {
		t.Fatal(err)
	}
	tl := tool(t, writeFile)
	var logs [2]bytes.Buffer
	var hosts [2]*host.Host
	for i := range hosts {
		if hosts[i], err = host.New(ctx, cfg, host.Defaults().WithPluginRuntime(rt).WithLogger(slog.New(slog.NewTextHandler(&logs[i], nil)))); err != nil {
			t.Fatal(err)
		}
		defer hosts[i].Close(ctx)
	}
	for i, h := range hosts {
		before := logs[1-i].Len()
		h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: tl, Arguments: json.RawMessage(`{}`)})
		if !strings.Contains(logs[i].String(), `msg="log line" plugin=chatty`) {
			t.Errorf("host %d's logger did not get its plugin's lines: %q", i, logs[i].String())
		}
		if logs[1-i].Len() != before {
			t.Errorf("host %d's check logged to host %d's logger", i, 1-i)
		}
	}
	if strings.Contains(rtLog.String(), "plugin=chatty") {
		t.Errorf("the runtime's logger got a host's plugin lines: %q", rtLog.String())
	}
}

// BenchmarkNewOnASharedPluginRuntime is what a warm hook process pays per
// event for its host: host.New with argguard on a runtime that compiled
// it already, one Check and Close. BenchmarkNewFromDiskCache/argguard is
// the same in a process of its own.
func BenchmarkNewOnASharedPluginRuntime(b *testing.B) {
	ctx := context.Background()
	rt, err := plugin.NewRuntime(ctx, plugin.Options{CacheDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer rt.Close(ctx)
	cfg, err := config.LoadBytes("start.toml", []byte(benchConfig+argguardEtc))
	if err != nil {
		b.Fatal(err)
	}
	s := host.Defaults().WithPluginRuntime(rt)
	call := host.Call{Session: "s", Server: "fs", Tool: tool(b, writeFile), Arguments: []byte(`{"path":"/etc/passwd"}`)}
	first, err := host.New(ctx, cfg, s) // compiles argguard, once
	if err != nil {
		b.Fatal(err)
	}
	first.Close(ctx)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		h, err := host.New(ctx, cfg, s)
		if err != nil {
			b.Fatal(err)
		}
		if d := h.Check(ctx, call); d.Decision != host.Deny {
			b.Fatal(d.Reasons)
		}
		h.Close(ctx)
	}
}
