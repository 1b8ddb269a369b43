package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/channel"
)

// wrapArgs is "wrap" with a private approvals file, the given configs, and
// the upstream command after "--".
func wrapArgs(t testing.TB, app string, configs []string, upstream ...string) []string {
	args := []string{"wrap", "--app", app, "--approvals", filepath.Join(t.TempDir(), "approvals.json")}
	for _, c := range configs {
		args = append(args, "--config", c)
	}
	return append(append(args, "--"), upstream...)
}

// Tool definitions reach the client byte for byte: the raw tools/list of the
// upstream and of wrap in front of it hold the same bytes for every tool.
func TestWrapPassesDefinitionsThroughByteForByte(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name     string
		upstream func(t *testing.T) []string
	}{
		{"mcp-go testserver", func(t *testing.T) []string { return []string{testServer, "-state", dir} }},
		{"server-filesystem", func(t *testing.T) []string { return []string{npmServer(t, "mcp-server-filesystem"), dir} }},
		{"server-everything", func(t *testing.T) []string { return []string{npmServer(t, "mcp-server-everything")} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := tc.upstream(t)
			direct := startRaw(t, up[0], up[1:]...)
			direct.initialize("")
			wantNames, want := toolsOf(t, direct.call("tools/list", map[string]any{}))

			wrapped := startRaw(t, twBin, wrapArgs(t, "up", nil, up...)...)
			wrapped.initialize("")
			gotNames, got := toolsOf(t, wrapped.call("tools/list", map[string]any{}))

			if strings.Join(gotNames, ",") != strings.Join(wantNames, ",") {
				t.Fatalf("tool names differ:\nupstream %v\nwrap     %v", wantNames, gotNames)
			}
			for _, n := range wantNames {
				if !bytes.Equal(got[n], want[n]) {
					t.Errorf("tool %s differs:\nupstream %s\nwrap     %s", n, want[n], got[n])
				}
			}
		})
	}
}

// Through wrap, a destructive tool is asked about; each answer does what it
// says, with both elicitation styles: multi round-trip (2026-07-28) and
// server-initiated elicitation/create (2025-11-25).
func TestWrapAsksAndHonoursTheAnswer(t *testing.T) {
	t.Parallel()
	for _, legacy := range []bool{false, true} {
		name := "multi round-trip"
		if legacy {
			name = "elicitation/create"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ask := answers("allow_once", "deny", "decline", "allow_session")
			c := startGo(t, legacy, ask, twBin, wrapArgs(t, "ts", nil, testServer, "-state", t.TempDir())...)

			if out, isErr := c.call(t, "echo", map[string]any{"message": "hi"}); isErr || out != "echo: hi" {
				t.Fatalf("read-only echo: %q (error %v)", out, isErr)
			}
			if ask.count() != 0 {
				t.Fatalf("a read-only tool was asked about")
			}

			out, isErr := c.call(t, "write", map[string]any{"what": "a"})
			if isErr || out != "wrote a" {
				t.Fatalf("allow once: %q (error %v)", out, isErr)
			}
			q := ask.last()
			mustContain(t, q.Params.Message, "write")
			mustContain(t, q.Params.Message, "destructiveHint=true")
			mustContain(t, q.Params.Message, `what = "a"`)

			out, isErr = c.call(t, "write", map[string]any{"what": "b"})
			if !isErr || !strings.Contains(out, "denied") {
				t.Fatalf("deny: %q (error %v)", out, isErr)
			}
			out, isErr = c.call(t, "write", map[string]any{"what": "c"})
			if !isErr || !strings.Contains(out, "denied") {
				t.Fatalf("decline: %q (error %v)", out, isErr)
			}
			if ask.count() != 3 {
				t.Fatalf("asked %d times, want 3 (once is not remembered)", ask.count())
			}

			out, isErr = c.call(t, "write", map[string]any{"what": "d"})
			if isErr || out != "wrote d" {
				t.Fatalf("allow for session: %q (error %v)", out, isErr)
			}
			out, isErr = c.call(t, "write", map[string]any{"what": "e"})
			if isErr || out != "wrote e" {
				t.Fatalf("after allow for session: %q (error %v)", out, isErr)
			}
			if ask.count() != 4 {
				t.Fatalf("asked %d times, want 4: allow for session must not ask again", ask.count())
			}
		})
	}
}

// A client that cannot elicit gets a tool error that says what needs
// approval, why, and how to grant it; the command it names works.
func TestWrapExplainsAsksToClientsWithoutElicitation(t *testing.T) {
	t.Parallel()
	approvals := filepath.Join(t.TempDir(), "approvals.json")
	args := []string{"wrap", "--app", "ts", "--approvals", approvals, "--", testServer}
	c := startGo(t, false, nil, twBin, args...)
	out, isErr := c.call(t, "write", map[string]any{"what": "x"})
	if !isErr {
		t.Fatalf("want a tool error, got %q", out)
	}
	mustContain(t, out, "needs the user's approval")
	mustContain(t, out, "write can change files or data: asking")
	mustContain(t, out, `[apps.ts.tools."write"]`)
	mustContain(t, out, "toolwarden approvals add")

	// Run the command the error suggests, then the call goes through (in a
	// new session too: "always" approvals are persistent).
	i := strings.Index(out, "toolwarden approvals add")
	line := out[i:]
	line = line[:strings.IndexByte(line, ';')]
	fields := strings.Fields(strings.ReplaceAll(line, `"`, ""))
	mustContain(t, runTW(t, fields[1:]...), "approved ts/write")
	if b, _ := os.ReadFile(approvals); !bytes.Contains(b, []byte(`"tool": "write"`)) {
		t.Fatalf("approvals file after approvals add:\n%s", b)
	}
	c2 := startGo(t, false, nil, twBin, args...)
	if out, isErr := c2.call(t, "write", map[string]any{"what": "x"}); isErr || out != "wrote x" {
		t.Fatalf("after approvals add: %q (error %v)", out, isErr)
	}
}

// "always" is stored in the approvals file, honoured by the next session,
// listed by toolwarden approvals list, and gone after revoke.
func TestWrapAlwaysPersistsAcrossSessions(t *testing.T) {
	t.Parallel()
	approvals := filepath.Join(t.TempDir(), "approvals.json")
	args := []string{"wrap", "--app", "ts", "--approvals", approvals, "--", testServer}

	ask := answers("always")
	c := startGo(t, false, ask, twBin, args...)
	if out, isErr := c.call(t, "write", map[string]any{"what": "1"}); isErr {
		t.Fatalf("always: %q", out)
	}
	_ = c.Close()

	ask2 := answers("deny")
	c2 := startGo(t, false, ask2, twBin, args...)
	if out, isErr := c2.call(t, "write", map[string]any{"what": "2"}); isErr || ask2.count() != 0 {
		t.Fatalf("second session: %q (error %v, asked %d)", out, isErr, ask2.count())
	}

	list := runTW(t, "approvals", "list", "--approvals", approvals)
	mustContain(t, list, "ts")
	mustContain(t, list, "write")
	var grants []struct {
		Server, Tool string
		Hash         string `json:"definition_hash"`
	}
	if err := json.Unmarshal([]byte(runTW(t, "approvals", "list", "--json", "--approvals", approvals)), &grants); err != nil || len(grants) != 1 {
		t.Fatalf("approvals list --json: %v %+v", err, grants)
	}
	mustContain(t, runTW(t, "approvals", "revoke", "--approvals", approvals, "--server", "ts", "--hash", grants[0].Hash[:10]), "revoked 1")

	ask3 := answers("deny")
	c3 := startGo(t, false, ask3, twBin, args...)
	if out, isErr := c3.call(t, "write", map[string]any{"what": "3"}); !isErr || ask3.count() != 1 {
		t.Fatalf("after revoke: %q (error %v, asked %d)", out, isErr, ask3.count())
	}
}

// A client cannot approve a call it was never asked about, replay an
// answer, or move an answer to other arguments.
func TestWrapRefusesForgedAndReplayedApprovals(t *testing.T) {
	t.Parallel()
	c := startRaw(t, twBin, wrapArgs(t, "ts", nil, testServer)...)
	call := func(args map[string]any, mrt map[string]any) callResult {
		params := map[string]any{"name": "write", "arguments": args, "_meta": modernMeta(true)}
		for k, v := range mrt {
			params[k] = v
		}
		return decodeCall(t, c.call("tools/call", params))
	}
	accept := map[string]any{channel.ElicitationID: map[string]any{"action": "accept", "content": map[string]any{"decision": "allow_once"}}}

	// Forged: answers attached to a first call, without or with a made-up state.
	r := call(map[string]any{"what": "forged"}, map[string]any{"inputResponses": accept})
	if !r.IsError || !strings.Contains(r.Text, "refused") || strings.Contains(r.Text, "wrote") {
		t.Fatalf("forged without state: %+v", r)
	}
	r = call(map[string]any{"what": "forged"}, map[string]any{"inputResponses": accept, "requestState": "tw1.AAAA.BBBB"})
	if !r.IsError || !strings.Contains(r.Text, "forged") {
		t.Fatalf("forged state: %+v", r)
	}

	// A real question, answered: works once.
	q := call(map[string]any{"what": "real"}, nil)
	if !q.Asked || q.State == "" {
		t.Fatalf("want input_required with a requestState, got %+v", q)
	}
	r = call(map[string]any{"what": "real"}, map[string]any{"inputResponses": accept, "requestState": q.State})
	if r.IsError || r.Text != "wrote real" {
		t.Fatalf("answered: %+v", r)
	}
	// Replayed.
	r = call(map[string]any{"what": "real"}, map[string]any{"inputResponses": accept, "requestState": q.State})
	if !r.IsError || !strings.Contains(r.Text, "already used") {
		t.Fatalf("replay: %+v", r)
	}
	// Moved to other arguments.
	q = call(map[string]any{"what": "asked"}, nil)
	r = call(map[string]any{"what": "something else"}, map[string]any{"inputResponses": accept, "requestState": q.State})
	if !r.IsError || !strings.Contains(r.Text, "arguments differ") {
		t.Fatalf("altered arguments: %+v", r)
	}
	// Tampered state.
	q = call(map[string]any{"what": "asked"}, nil)
	tampered := q.State[:len(q.State)-2] + "AA"
	if tampered == q.State {
		tampered = q.State[:len(q.State)-2] + "BB"
	}
	r = call(map[string]any{"what": "asked"}, map[string]any{"inputResponses": accept, "requestState": tampered})
	if !r.IsError || !strings.Contains(r.Text, "forged") {
		t.Fatalf("tampered state: %+v", r)
	}
	// An answer that was not offered ("always" is offered here, "sudo" is not).
	q = call(map[string]any{"what": "asked"}, nil)
	bad := map[string]any{channel.ElicitationID: map[string]any{"action": "accept", "content": map[string]any{"decision": "sudo"}}}
	r = call(map[string]any{"what": "asked"}, map[string]any{"inputResponses": bad, "requestState": q.State})
	if !r.IsError || !strings.Contains(r.Text, "not offered") {
		t.Fatalf("unoffered answer: %+v", r)
	}
}

// runTW runs the toolwarden binary to completion and returns its stdout.
func runTW(t testing.TB, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(twBin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("toolwarden %s: %v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// Every call is checked and every call that ran is observed, in the audit
// log: a denied call is checked but never observed.
func TestWrapChecksAndObservesEveryCall(t *testing.T) {
	t.Parallel()
	audit := filepath.Join(t.TempDir(), "audit.jsonl")
	args := []string{"wrap", "--app", "ts", "--approvals", filepath.Join(t.TempDir(), "a.json"), "--audit", audit, "--", testServer}
	c := startGo(t, false, nil, twBin, args...)
	c.call(t, "echo", map[string]any{"message": "1"})
	c.call(t, "write", map[string]any{"what": "x"}) // asked, client cannot elicit: not run
	c.call(t, "echo", map[string]any{"message": "2"})
	_ = c.Close()
	var events []string
	eventually(t, 10*time.Second, "the audit log", func() bool {
		b, _ := os.ReadFile(audit)
		events = events[:0]
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var r struct {
				Event    string `json:"event"`
				Decision struct {
					Tool     string `json:"tool"`
					Decision string `json:"decision"`
				} `json:"decision"`
			}
			if json.Unmarshal([]byte(line), &r) == nil {
				events = append(events, r.Event+":"+r.Decision.Tool+":"+r.Decision.Decision)
			}
		}
		return len(events) >= 5
	})
	want := "check:echo:allow,observe:echo:,check:write:ask,check:echo:allow,observe:echo:"
	if got := strings.Join(events, ","); got != want {
		t.Fatalf("audit events:\n got %s\nwant %s", got, want)
	}
}
