package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
)

// guestCallsPolicies configures both first-party plugins that act on a
// call: trifecta (check and observe) and argguard (check).
const guestCallsPolicies = "\n[policies.trifecta]\nbuiltin = \"trifecta\"\n%s" +
	"\n[policies.argguard]\nbuiltin = \"argguard\"\n" +
	`config.rules = [{ tool = "*", arg = "path", deny_glob = "/etc/**" }]` + "\n"

// One decided and observed call enters each matching plugin's guest once
// per event it handles: one check per checker, one observe per observer,
// never a second check (and the list event, which neither handles, never).
func TestOneCallRunsEachPluginsCheckOnce(t *testing.T) {
	t.Parallel()
	h := testhost.New(t, benchConfig+fmt.Sprintf(guestCallsPolicies, ""), host.Defaults().WithPluginCacheDir(pluginCache))
	n := host.CountGuestCalls(h)
	tl := tool(t, writeFile)
	call := host.Call{Session: "s", Server: "fs", Tool: tl, Arguments: json.RawMessage(`{"path":"/home/me/src/x"}`)}
	ctx := context.Background()
	for round := int64(1); round <= 3; round++ {
		d := h.Check(ctx, call)
		h.Observe(ctx, call, &d, host.Result{Text: "ok"})
		for _, c := range []struct {
			plugin, event string
			want          int64
		}{
			{"trifecta", "check", round},
			{"argguard", "check", round},
			{"trifecta", "observe", round},
			{"argguard", "observe", 0},
			{"trifecta", "list", 0},
			{"argguard", "list", 0},
		} {
			if got := n.Get(c.plugin, c.event); got != c.want {
				t.Errorf("after %d calls, %s ran %s %d times, want %d", round, c.plugin, c.event, got, c.want)
			}
		}
	}
}

// Observe is skipped, guest and all, exactly where it cannot matter: no
// observer matches the call and no audit log records it. A matching
// observer always runs, even when its labels are already in the session
// (only the plugin knows what its observe can change).
func TestObserveIsSkippedOnlyWhereNoObserverMatches(t *testing.T) {
	t.Parallel()
	const scoped = "apps = [\"notes\"]\n"
	notes := "\n[mcp_servers.notes]\ncommand = \"notes-server\"\n[apps.notes.tools.read_notes]\nhints = { reads_private_data = true }\n"
	tests := []struct {
		name         string
		scope        string
		audit        bool
		server       string
		wantObserves bool
	}{
		{"a call to an app no observer matches is not observed", scoped, false, "fs", false},
		{"a call to the app the observer is scoped to is observed", scoped, false, "notes", true},
		{"an observer with no scope observes every call", "", false, "fs", true},
		{"with an audit log a call no observer matches is still recorded", scoped, true, "fs", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var log bytes.Buffer
			s := host.Defaults().WithPluginCacheDir(pluginCache)
			if tt.audit {
				s = s.WithAuditLog(&log)
			}
			h := testhost.New(t, benchConfig+notes+fmt.Sprintf(guestCallsPolicies, tt.scope), s)
			n := host.CountGuestCalls(h)
			tl := tool(t, `{"name":"read_notes","annotations":{"readOnlyHint":true}}`)
			call := host.Call{Session: "s", Server: tt.server, Tool: tl, Arguments: json.RawMessage(`{}`)}
			ctx := context.Background()
			for i := 0; i < 2; i++ { // the second time, the labels are there already
				d := h.Check(ctx, call)
				if got, want := h.ObservesCall(&d), tt.wantObserves || tt.audit; got != want {
					t.Fatalf("ObservesCall = %v, want %v", got, want)
				}
				h.Observe(ctx, call, &d, host.Result{Text: "ok"})
			}
			want := int64(0)
			if tt.wantObserves {
				want = 2
			}
			if got := n.Get("trifecta", "observe"); got != want {
				t.Errorf("trifecta's observe ran %d times, want %d", got, want)
			}
			if tt.audit && bytes.Count(log.Bytes(), []byte(`"event":"observe"`)) != 2 {
				t.Errorf("the audit log has no observe record per call:\n%s", log.String())
			}
		})
	}
}
