package plugin

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/internal/policy"
)

// builtinConfig is one config of a first-party module in a fresh instance,
// which its first event configures, as the pool's instances are: many
// configs of one loaded module without a load each, for the property
// tests of the builtins (their expected answers are in plugins/*/cases).
type builtinConfig struct {
	host *Plugin // lends its runtime, module and envelope builder
	in   *instance
	cfg  string
	tail []byte // this config's end of the envelope
}

// newBuiltinConfig: host is the builtin name loaded with no config; the
// instance has its deadline.
func newBuiltinConfig(t testing.TB, host *Plugin, name string, cfg any) *builtinConfig {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in, err := host.newInstance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &builtinConfig{host: host, in: in, cfg: string(raw), tail: tail(name, raw)}
}

func (m *builtinConfig) close() { m.in.close() }

// withConfig is the host's envelope env with this config's end instead of
// the host's (the whole plugin block, even for a module that declared
// needs without config: the host may send more than a plugin needs).
func (m *builtinConfig) withConfig(env []byte) []byte {
	return append(env[:len(env)-len(m.host.closing())], m.tail...)
}

// envelope is the host's check envelope for c, with this config.
func (m *builtinConfig) envelope(c *policy.CheckInput) []byte {
	return m.withConfig(m.in.appendCheck(nil, c))
}

// run gives the module one event and fails the test if the module fails.
// The output is a copy: the module's own buffer is reused by its next
// event.
func (m *builtinConfig) run(t testing.TB, ev Event, env []byte) (uint32, []byte) {
	t.Helper()
	out, code, f := m.in.call(context.Background(), ev, env)
	if f != nil {
		t.Fatalf("config %s: the module failed: %v\ninput %q", m.cfg, f, env)
	}
	return code, append([]byte(nil), out...)
}

// verdict runs a check and parses it as the host does.
func (m *builtinConfig) verdict(t testing.TB, c *policy.CheckInput) policy.PluginVerdict {
	t.Helper()
	code, out := m.run(t, EventCheck, m.envelope(c))
	if code != 0 {
		t.Fatalf("config %s: code %d: %s", m.cfg, code, out)
	}
	v, err := parseCheck(out)
	if err != nil && len(out) > 0 {
		t.Fatalf("config %s: the host refuses %q: %v", m.cfg, out, err)
	}
	return v
}

// goRegexGuard is testdata/goregexguard built with the Go toolchain, once
// per test binary: a real Go guest for the tests that need one (the
// first-party modules are Rust).
func goRegexGuard(t testing.TB) []byte {
	t.Helper()
	goRegexGuardOnce.Do(func() { goRegexGuardBin = buildGuest(t, "./testdata/goregexguard") })
	if goRegexGuardBin == nil {
		t.Fatal("testdata/goregexguard did not build")
	}
	return goRegexGuardBin
}

var (
	goRegexGuardOnce sync.Once
	goRegexGuardBin  []byte
)
