package plugin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
)

// A Go plugin built without -buildmode=c-shared is a WASI command: the Go
// runtime traps in its exports with a bare "unreachable", and only the
// plugin log says why. The fault must say what to do.
func TestAGoCommandModuleFaultSaysToBuildWithCShared(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds a Go guest")
	}
	out := filepath.Join(t.TempDir(), "command.wasm")
	cmd := exec.Command("go", "build", "-trimpath", "-o", out, "../../examples/plugins/go/conformance")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	rt := newRuntime(t, Options{})
	_, err := FromBytes(context.Background(), rt, &config.Policy{Name: "cmd"}, readFile(t, out))
	if err == nil {
		t.Fatal("want the command module refused at load: its runtime never starts")
	}
	for _, want := range []string{"trap: wasm error: unreachable", "build Go plugins with -buildmode=c-shared"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("load error %q\nwant it to contain %q", err, want)
		}
	}
}

// The hint is for command modules only: a reactor's trap keeps its plain
// message.
func TestAReactorTrapHasNoCommandHint(t *testing.T) {
	t.Parallel()
	rt := newRuntime(t, Options{})
	pol := config.Policy{Name: "trap", OnError: "deny"}
	p, err := loadWasm(t, rt, pol, "testdata/hostile/trap.wasm")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.Raw(context.Background(), EventCheck, []byte(`{"call":{"arguments":{"x":"BOOM"}}}`))
	if err == nil || !strings.Contains(err.Error(), "unreachable") || strings.Contains(err.Error(), "c-shared") {
		t.Fatalf("want a plain trap, got %v", err)
	}
}
