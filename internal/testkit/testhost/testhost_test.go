package testhost_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

const writeFile = `{"name":"write_file","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":false}}`

func TestTheHostDecidesByTheTOMLItWasGiven(t *testing.T) {
	t.Parallel()
	tool, err := host.ParseTool([]byte(writeFile))
	if err != nil {
		t.Fatal(err)
	}
	call := host.Call{Session: "s", Server: "fs", Tool: tool, Arguments: json.RawMessage(`{}`)}
	for toml, want := range map[string]host.Verdict{
		"": host.Ask,
		"[apps.fs]\ndefault_tools_approval_mode = \"approve\"\n": host.Allow,
		"[apps.fs]\nenabled = false\n":                           host.Deny,
	} {
		h := testhost.New(t, toml, host.Defaults())
		if d := h.Check(context.Background(), call); d.Decision != want {
			t.Errorf("config %q: %s, want %s (%+v)", toml, d.Decision, want, d.Reasons)
		}
	}
}

func TestTheHostIsClosedWhenTheTestEnds(t *testing.T) {
	t.Parallel()
	var h *host.Host
	t.Run("inner", func(t *testing.T) { h = testhost.New(t, "", host.Defaults()) })
	err := h.Reload(context.Background(), testhost.Config(t, ""))
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Reload after the test that built the host ended: %v, want the host closed", err)
	}
}

func TestAConfigThatDoesNotLoadFailsTheTestAndSaysWhere(t *testing.T) {
	t.Parallel()
	rec := &recorder{TB: t}
	func() {
		defer func() { _ = recover() }() // Fatalf below stops the helper as FailNow would
		testhost.Config(rec, "[apps.fs\n")
	}()
	if !strings.Contains(rec.msg, "config.toml:1") {
		t.Fatalf("failure message %q does not name the file and line", rec.msg)
	}
}

// recorder keeps a Fatalf's message instead of ending the test, and stops
// the caller the way FailNow does.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic("fatal")
}
