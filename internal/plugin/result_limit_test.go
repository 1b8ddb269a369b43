package plugin

import (
	"context"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/plugins"
)

// result_limit_kb lets a policy see more of a result than the 16 KiB
// window, and the envelope still fits the 1 MiB input cap even when
// escaping would make the text six times longer: a long result must never
// turn observe into a fault (which would leave the session unmarked).
func TestResultLimitLetsAPolicySeeMoreAndAlwaysFitsTheInputCap(t *testing.T) {
	rt := newRuntime(t, Options{PoolSize: 1})
	bin, _ := plugins.Builtin("secrets")
	load := func(kb int) *Plugin {
		p, err := FromBytes(context.Background(), rt, &config.Policy{Name: "secrets", ResultLimitKB: kb, TimeoutMs: 5000}, bin)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	tool, err := hints.ParseTool([]byte(`{"name":"read_file"}`))
	if err != nil {
		t.Fatal(err)
	}
	key := "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + strings.Repeat("q", 64) + "\n-----END RSA PRIVATE KEY-----\n"
	observe := func(p *Plugin, short, full string) policy.ObserveResult {
		return p.Observe(context.Background(), &policy.ObserveInput{Session: "s", Server: "fs", App: "fs", Tool: tool, Result: short, ResultFull: full})
	}
	far := strings.Repeat("plain text line\n", 4096) + key // the key 64 KiB in
	if r := observe(load(0), far[:4<<10], ""); r.Err != nil || len(r.Labels) != 0 {
		t.Fatalf("default window: %+v", r)
	}
	if r := observe(load(128), far[:4<<10], far); r.Err != nil || len(r.Labels) == 0 {
		t.Fatalf("result_limit_kb = 128 should see the key 64 KiB in: %+v", r)
	}
	controls := strings.Repeat("\x01", config.MaxResultLimitKB<<10)
	if r := observe(load(config.MaxResultLimitKB), controls[:4<<10], controls); r.Err != nil {
		t.Fatalf("a result that escapes to six times its size: %v", r.Err)
	}
}
