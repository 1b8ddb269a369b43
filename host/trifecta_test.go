package host_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

const trifectaConfig = `
[policies.trifecta]
builtin = "trifecta"
config = { mode = "%s" }

[apps.notes.tools.read_notes]
hints = { reads_private_data = true }

# Sending mail reaches the open world but brings nothing back to read.
[apps.mail.tools.send_email]
hints = { sees_untrusted_content = false }
`

// The lethal trifecta end to end through Check and Observe with the
// first-party WASM plugin: private data, then untrusted content, then a tool
// that can send data out.
func TestTrifectaAsksThenDeniesExfiltrationAfterBothLegs(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"ask", "deny"} {
		t.Run(mode, func(t *testing.T) {
			cfg, err := config.LoadBytes("trifecta.toml", []byte(strings.Replace(trifectaConfig, "%s", mode, 1)))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			h, err := host.New(ctx, cfg, host.Defaults().WithPluginCacheDir(pluginCache))
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close(ctx)
			if w := h.Warnings(); len(w) > 0 {
				t.Fatalf("warnings: %v", w)
			}
			readNotes := tool(t, `{"name":"read_notes","annotations":{"readOnlyHint":true,"openWorldHint":false}}`)
			fetch := tool(t, `{"name":"fetch","annotations":{"readOnlyHint":true,"openWorldHint":true}}`)
			send := tool(t, `{"name":"send_email","annotations":{"destructiveHint":false,"openWorldHint":true}}`)
			run := func(server string, tl *host.Tool) host.Decision {
				c := host.Call{Session: "s", Server: server, Tool: tl}
				d := h.Check(ctx, c)
				if d.Decision != host.Deny {
					h.Observe(ctx, c, &d, host.Result{Text: "ok"})
				}
				return d
			}

			// Before any taint, send_email is an ordinary rememberable ask;
			// the user allows it for the session.
			d := run("mail", send)
			if d.Decision != host.Ask || !d.Rememberable {
				t.Fatalf("untainted send: %s rememberable=%v %+v", d.Decision, d.Rememberable, d.Reasons)
			}
			if err := h.Approve("s", &d, host.ForSession); err != nil {
				t.Fatal(err)
			}
			if d := run("mail", send); d.Decision != host.Allow {
				t.Fatalf("remembered send: %s", d.Decision)
			}

			if d := run("notes", readNotes); d.Decision != host.Allow {
				t.Fatalf("read_notes: %s %+v", d.Decision, d.Reasons)
			}
			if !h.Session("s").HasLabel("private_data_seen") || h.Session("s").HasLabel("untrusted_content_seen") {
				t.Fatalf("labels after the private read: %v", h.Session("s").Labels())
			}
			// fetch itself can exfiltrate, but only one leg is present yet.
			if d := run("web", fetch); d.Decision != host.Allow {
				t.Fatalf("fetch: %s %+v", d.Decision, d.Reasons)
			}
			if !h.Session("s").HasLabel("untrusted_content_seen") {
				t.Fatalf("labels after fetch: %v", h.Session("s").Labels())
			}

			// All three legs: the session approval no longer applies.
			d = run("mail", send)
			want := host.Ask
			if mode == "deny" {
				want = host.Deny
			}
			if d.Decision != want || d.Rememberable {
				t.Fatalf("tainted send: %s rememberable=%v %+v", d.Decision, d.Rememberable, d.Reasons)
			}
			found := false
			for _, r := range d.Reasons {
				found = found || (r.Code == "lethal_trifecta" && r.Source == "plugin:trifecta")
			}
			if !found {
				t.Fatalf("reasons %+v lack the trifecta", d.Reasons)
			}
			if mode == "ask" {
				if err := h.Approve("s", &d, host.ForSession); !errors.Is(err, host.ErrNotRememberable) {
					t.Fatalf("a trifecta ask was rememberable: %v", err)
				}
			}
			// Another session is untainted.
			if d := h.Check(ctx, host.Call{Session: "other", Server: "mail", Tool: send}); d.Decision != host.Ask || !d.Rememberable {
				t.Fatalf("other session: %s", d.Decision)
			}
		})
	}
}

func TestAPluginThatFailsToLoadDeniesAndSaysWhy(t *testing.T) {
	t.Parallel()
	cfg, err := config.LoadBytes("bad.toml", []byte(`
[policies.missing]
wasm = "/nonexistent/plugin.wasm"
`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := host.New(ctx, cfg, host.Defaults().WithoutPluginDiskCache())
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if len(h.Warnings()) != 1 || !strings.Contains(h.Warnings()[0].Error(), "missing") {
		t.Fatalf("warnings %v", h.Warnings())
	}
	d := h.Check(ctx, host.Call{Session: "s", Server: "fs", Tool: tool(t, `{"name":"r","annotations":{"readOnlyHint":true}}`)})
	if d.Decision != host.Deny || !strings.Contains(d.Reasons[0].Message, "missing") {
		t.Fatalf("%s %+v", d.Decision, d.Reasons)
	}
}
