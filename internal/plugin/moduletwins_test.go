package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/toolwarden/toolwarden/internal/policy"
	pdk "github.com/toolwarden/toolwarden/pdk/go"
)

// moduleTwins is one config of a builtin plugin in the shipped module (a
// fresh instance, which its first event configures, as the pool's
// instances are) and in its Go reference, fed the same envelopes: the
// differential harness of the builtins' module tests.
type moduleTwins struct {
	host *Plugin // lends its runtime, module and envelope builder
	in   *instance
	ref  *pdk.Plugin
	cfg  string
	tail []byte // this config's end of the envelope
}

// newModuleTwins: host is the builtin name loaded with no config; the
// instance has its deadline.
func newModuleTwins(t testing.TB, host *Plugin, name string, ref *pdk.Plugin, cfg any) *moduleTwins {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in, err := host.newInstance(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &moduleTwins{host: host, in: in, ref: ref, cfg: string(raw), tail: tail(name, raw)}
}

func (m *moduleTwins) close() { m.in.close() }

// withConfig is the host's envelope env with this config's end instead of
// the host's (the whole plugin block, even for a module that declared
// needs without config: the host may send more than a plugin needs).
func (m *moduleTwins) withConfig(env []byte) []byte {
	return append(env[:len(env)-len(m.host.closing())], m.tail...)
}

// envelope is the host's check envelope for c, with this config.
func (m *moduleTwins) envelope(c *policy.CheckInput) []byte {
	return m.withConfig(m.in.appendCheck(nil, c))
}

// run gives both the same event and fails on any difference in return
// code or output bytes. The output is a copy: the module's own buffer is
// reused by its next event.
func (m *moduleTwins) run(t testing.TB, ev Event, env []byte) (uint32, []byte) {
	t.Helper()
	got, code, f := m.in.call(context.Background(), ev, env)
	if f != nil {
		t.Fatalf("config %s: the module failed: %v\ninput %q", m.cfg, f, env)
	}
	wantCode, want := m.ref.Handle(uint32(ev), env)
	if code != wantCode || !bytes.Equal(got, want) {
		t.Fatalf("config %s\ninput %q\nmodule    %d %q\nreference %d %q", m.cfg, env, code, got, wantCode, want)
	}
	return code, append([]byte(nil), got...)
}
