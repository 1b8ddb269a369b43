package host_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// The first-party plugins declare their checks deterministic, so each
// instance answers a repeated input from its last verdict. These tests try
// to make that verdict answer a call it was not given for: the same call in
// another session, and the same relative path under another working
// directory. Every check is made twice in a row, so that the second answer
// comes from the reuse path, and the sessions and contexts alternate, so
// that a verdict kept across them would show.

// A tainted session's deny and a clean session's allow never trade places,
// however the calls of the two sessions interleave.
func TestAReusedVerdictNeverCrossesSessions(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, benchConfig+"[apps.fs.hints]\nreads_private_data = true\nsees_untrusted_content = true\ncan_exfiltrate = true\n"+
		"\n[policies.trifecta]\nbuiltin = \"trifecta\"\nconfig = { mode = \"deny\" }\n", host.Defaults())
	ctx := context.Background()
	call := func(session string) host.Call {
		return host.Call{Session: session, Server: "fs", Tool: tool(t, writeFile), Arguments: json.RawMessage(`{"path":"/home/me/notes.txt","content":"x"}`)}
	}
	d := h.Check(ctx, call("tainted"))
	h.Observe(ctx, call("tainted"), &d, host.Result{})
	for round := range 3 {
		for _, s := range []string{"clean", "tainted", "clean", "tainted"} {
			for range 2 {
				d := h.Check(ctx, call(s))
				if got, want := hasCode(&d, "lethal_trifecta"), s == "tainted"; got != want {
					t.Fatalf("round %d, session %s: lethal_trifecta %v, want %v: %+v", round, s, got, want, d.Reasons)
				}
			}
		}
	}
}

// argguard resolves a relative path against what is known of the server,
// and that context is part of its input: a path allowed under /tmp is not
// allowed when the same call arrives for a server working in /etc.
func TestAReusedVerdictNeverOutlivesAChangeOfWorkingDirectory(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, benchConfig+"\n[policies.argguard]\nbuiltin = \"argguard\"\n"+
		`config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }]`+"\n", host.Defaults())
	ctx := context.Background()
	for round := range 3 {
		for _, cwd := range []string{"/tmp", "/etc", "/tmp", "/etc"} {
			for range 2 {
				d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: tool(t, writeFile),
					Arguments: json.RawMessage(`{"path":"passwd","content":"x"}`),
					Context:   &host.ServerContext{Cwd: cwd, Home: "/home/me"}})
				if got, want := d.Decision == host.Deny, cwd == "/etc"; got != want {
					t.Fatalf("round %d, cwd %s: %s, want deny %v: %+v", round, cwd, d.Decision, want, d.Reasons)
				}
			}
		}
	}
}
