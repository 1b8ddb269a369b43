package host_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/testkit"
)

// A policy's data file is read again when the host reloads its config:
// editing hosts.json and reloading changes the next decision.
func TestReloadRereadsAPolicyDataFile(t *testing.T) {
	dir := t.TempDir()
	wasm := filepath.Join(dir, "hosts.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", wasm, "./internal/plugin/testdata/godata")
	cmd.Dir = testkit.Root()
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	data := filepath.Join(dir, "hosts.json")
	write := func(s string) {
		if err := os.WriteFile(data, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte("[policies.hosts]\nwasm = \"hosts.wasm\"\ndata = \"hosts.json\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func() *config.Config {
		cfg, err := config.Load(cfgPath)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	write(`{"hosts":["fs"]}`)
	ctx := context.Background()
	h, err := host.New(ctx, load(), host.Defaults().WithPluginCacheDir(pluginCache))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	tl := tool(t, budgetTool)
	decide := func(server string) policy.Verdict {
		return h.Check(ctx, host.Call{Session: "s", Server: server, Tool: tl}).Decision
	}
	if fs, web := decide("fs"), decide("web"); fs != host.Allow || web != host.Deny {
		t.Fatalf("before the edit: fs %s, web %s; want allow, deny", fs, web)
	}
	write(`{"hosts":["web"]}`)
	if err := h.Reload(ctx, load()); err != nil {
		t.Fatal(err)
	}
	if fs, web := decide("fs"), decide("web"); fs != host.Deny || web != host.Allow {
		t.Fatalf("after the edit and a reload: fs %s, web %s; want deny, allow", fs, web)
	}
}
