package plugin

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hints"
	"github.com/toolwarden/toolwarden/internal/policy"
)

func loadData(t *testing.T, rt *Runtime, data string) (*Plugin, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "hosts.json")
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := FromBytes(context.Background(), rt, &config.Policy{Name: "hosts", Data: path}, buildGuest(t, "./testdata/godata"))
	t.Cleanup(p.Close)
	return p, err
}

// The data file reaches each instance once, at its start, and never rides
// in an event.
func TestTheDataFileIsDeliveredOncePerInstance(t *testing.T) {
	rt := newRuntime(t, Options{})
	p, err := loadData(t, rt, `{"hosts":["fs"]}`)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		if v := p.Check(ctx, checkInput(`{}`)); v.Verdict != policy.Allow || v.Reason != "inits=1" {
			t.Fatalf("check %d: %s %q (%v); want allow with one delivery", i, v.Verdict, v.Reason, v.Err)
		}
	}
	if n := p.inits.Load(); n != 1 {
		t.Fatalf("%d deliveries for one instance, want 1", n)
	}
	other := checkInput(`{}`)
	other.Server = "web"
	if v := p.Check(ctx, other); v.Verdict != policy.Deny {
		t.Fatalf("a server the data file does not list: %s, want deny", v.Verdict)
	}
	spin := checkInput(`{}`)
	spin.Tool = &hints.Tool{Name: "spin", HashHex: testTool.HashHex}
	if v := p.Check(ctx, spin); v.Err == nil {
		t.Fatal("spin did not fail")
	}
	if v := p.Check(ctx, checkInput(`{}`)); v.Verdict != policy.Allow || v.Reason != "inits=1" {
		t.Fatalf("the instance that replaced the discarded one: %s %q; want allow, its own one delivery", v.Verdict, v.Reason)
	}
	if n := p.inits.Load(); n != 2 {
		t.Fatalf("%d deliveries for two instances, want 2", n)
	}
	in := p.pool.take()
	defer p.pool.give(in)
	if env := in.appendCheck(nil, checkInput(`{}`)); strings.Contains(string(env), `"data"`) {
		t.Fatalf("a check envelope carries the data: %s", env)
	}
}

func TestABadDataFileRefusesThePluginAndSaysWhere(t *testing.T) {
	rt := newRuntime(t, Options{})
	for _, tc := range []struct {
		name, data, want string
	}{
		{"JSON with a syntax error names its line and column", "{\n  \"hosts\": [\"fs\",]\n}", ":2:18: not JSON"},
		{"a file cut short names its end", `{"hosts":[`, ":1:10: not JSON"},
		{"a file over 4 MiB is refused", `"` + strings.Repeat("x", config.MaxPolicyData) + `"`, "over 4 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := loadData(t, rt, tc.data)
			var de *DataError
			if err == nil || !errors.As(err, &de) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want a data file error containing %q", err, tc.want)
			}
			if v := p.Check(context.Background(), checkInput(`{}`)); v.Verdict != policy.Deny || v.Err == nil {
				t.Fatalf("a plugin refused at load answers %s, want its on_error deny", v.Verdict)
			}
		})
	}
	_, err := FromBytes(context.Background(), rt, &config.Policy{Name: "hosts", Data: filepath.Join(t.TempDir(), "missing.json")}, nil)
	if err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("a missing data file: %v", err)
	}
}
