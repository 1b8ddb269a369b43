package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/host/policy"
)

// intoCalls are calls of every shape a decision of scalingConfig (with a
// wasm list plugin beside trifecta and argguard) takes, in one tainted
// session: trifecta's ask, argguard's deny and ask, an allow, a tool a
// plugin hides, one the config hides, invalid arguments, and (in a
// session of its own) a write approved for the session.
func intoCalls(t *testing.T) (*host.Host, []host.Call) {
	t.Helper()
	h := newHost(t, scalingConfig+"[apps.fs.tools.disabled]\nenabled = false\n"+
		fmt.Sprintf("[policies.hider]\nwasm = %q\nconfig = { hide = [\"secret\"] }\n", hidelistWasm),
		host.Defaults().WithPluginCacheDir(pluginCache))
	ctx := context.Background()
	write, read := tool(t, writeFile), tool(t, readFile)
	run := tool(t, `{"name":"run","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false,"destructiveHint":true}}`)
	secret := tool(t, `{"name":"secret","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)
	disabled := tool(t, `{"name":"disabled","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`)
	call := func(tl *host.Tool, args string) host.Call {
		return host.Call{Session: "s", Server: "fs", Tool: tl, Arguments: json.RawMessage(args)}
	}
	taint := call(write, `{"path":"/home/me/src/notes.txt","content":"hello"}`)
	d := h.Check(ctx, taint)
	h.Observe(ctx, taint, &d, host.Result{})
	approved := host.Call{Session: "approved", Server: "docs", Tool: write, Arguments: json.RawMessage(`{"path":"/home/me/src/notes.txt","content":"hello"}`)}
	if d := h.Check(ctx, approved); d.Decision != host.Ask || h.Approve("approved", &d, host.ForSession) != nil {
		t.Fatalf("the write to approve: %s %+v", d.Decision, d.Reasons)
	}
	calls := []host.Call{
		taint,
		call(write, `{"path":"/etc/passwd","content":"x"}`),
		call(run, `{"command":"rm -rf /"}`),
		{Session: "s", Server: "docs", Tool: read, Arguments: json.RawMessage(`{"path":"/home/me/src/notes.txt"}`)},
		call(secret, `{}`),
		call(disabled, `{}`),
		call(write, `{"path":"/a","path":"/etc/passwd"}`),
		approved,
	}
	want := []struct {
		v    policy.Verdict
		code string
	}{
		{host.Ask, "lethal_trifecta"}, {host.Deny, ""}, {host.Ask, ""}, {host.Allow, ""},
		{host.Deny, policy.CodeHiddenByPlugin}, {host.Deny, policy.CodeBlockedByAppConfig}, {host.Deny, policy.CodeInvalidArguments},
		{host.Allow, policy.CodeRemembered},
	}
	for i, c := range calls {
		d := h.Check(ctx, c)
		if d.Decision != want[i].v || want[i].code != "" && !hasCode(&d, want[i].code) {
			t.Fatalf("call %d (%s): %s %+v, want %s %s", i, c.Tool.Name, d.Decision, d.Reasons, want[i].v, want[i].code)
		}
	}
	return h, calls
}

// CheckInto decides every call as Check does, whatever the Decision it
// writes into held before: each shape of decision after each other, with
// real plugins. Nothing of a decision leaks into the next.
func TestCheckIntoDecidesAsCheckDoes(t *testing.T) {
	t.Parallel()
	h, calls := intoCalls(t)
	ctx := context.Background()
	for _, first := range calls {
		for _, next := range calls {
			var d host.Decision
			h.CheckInto(ctx, first, &d)
			h.CheckInto(ctx, next, &d)
			want := h.Check(ctx, next)
			if got := d.Clone(); !reflect.DeepEqual(withoutElapsed(got), withoutElapsed(want)) {
				t.Errorf("%s after %s:\n got %+v\nwant %+v", next.Tool.Name, first.Tool.Name, got, want)
			}
		}
	}
}

// withoutElapsed is d with its plugin steps' times zeroed (they differ
// from call to call) in a trace of its own.
func withoutElapsed(d host.Decision) host.Decision {
	d.Trace = append([]policy.Step(nil), d.Trace...)
	for i := range d.Trace {
		d.Trace[i].Elapsed = 0
	}
	return d
}

// A decision into a reused Decision allocates nothing with the
// first-party plugins, for an ask, an allow, a tool a plugin hides and a
// call approved earlier in the session:
// what makes CheckInto worth having (docs/performance.md). The only
// allocation of a Check, its memory, is what this test finds if CheckInto
// stops reusing it.
func TestCheckIntoAllocatesNothing(t *testing.T) {
	if host.RaceEnabled {
		t.Skip("the race detector's sync.Pool drops objects, which the host then allocates again; scripts/test.sh runs this test without it")
	}
	h, calls := intoCalls(t)
	ctx := context.Background()
	var d host.Decision
	for _, c := range calls {
		h.CheckInto(ctx, c, &d)
	}
	for _, i := range []int{0, 3, 4, 7} {
		if n := testing.AllocsPerRun(50, func() { h.CheckInto(ctx, calls[i], &d) }); n != 0 {
			t.Errorf("%s: %v allocations per CheckInto, want 0", calls[i].Tool.Name, n)
		}
		if d.Decision == host.Deny && !d.Hidden {
			t.Errorf("%s: %s %+v", calls[i].Tool.Name, d.Decision, d.Reasons)
		}
	}
}

// CheckInto from several goroutines, each with its own Decision, while
// the policy is reloaded: every decision is whole and is one policy's.
// Run with -race, this is also the test that a reused Decision's memory
// is never shared between goroutines.
func TestCheckIntoFromManyGoroutinesDuringReload(t *testing.T) {
	t.Parallel()
	h, calls := intoCalls(t)
	ctx := context.Background()
	want := make([]host.Decision, len(calls))
	for i, c := range calls {
		want[i] = withoutElapsed(h.Check(ctx, c))
	}
	cfg := loadConfig(t, scalingConfig+"[apps.fs.tools.disabled]\nenabled = false\n"+
		fmt.Sprintf("[policies.hider]\nwasm = %q\nconfig = { hide = [\"secret\"] }\n", hidelistWasm))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Go(func() {
			var d host.Decision
			for n := g; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := n % len(calls)
				h.CheckInto(ctx, calls[i], &d)
				if got := withoutElapsed(d.Clone()); !reflect.DeepEqual(got, want[i]) {
					t.Errorf("goroutine %d, %s:\n got %+v\nwant %+v", g, calls[i].Tool.Name, got, want[i])
					return
				}
			}
		})
	}
	for range 10 {
		if err := h.Reload(ctx, cfg); err != nil {
			t.Error(err)
			break
		}
	}
	close(stop)
	wg.Wait()
}
