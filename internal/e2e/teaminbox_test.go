package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/toolwarden/toolwarden/internal/browser"
	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// The team inbox (issue #25) through the real binary: replicas of
// `toolwarden serve` on one real Postgres, a member whose calls need a
// lead's approval, leads answering on any replica's /inbox API or page.

// teamInboxConfig serves one counting testserver (-count-echo: a call run
// twice shows) as deploy, release and both (approval_channel "both");
// each asks about echo (an
// open-world write, which may be remembered) and count only a lead's
// answer (approvers = group:leads). Callers: dana and mallory (dev), lena
// and leo (leads).
const teamInboxConfig = `
[mcp_servers.deploy]
url = %[1]q

[apps.deploy]
approvers = ["group:leads"]

[apps.deploy.tools.echo]
hints = { readOnlyHint = false, openWorldHint = true }

[mcp_servers.release]
url = %[1]q

[apps.release]
approvers = ["group:leads"]

[apps.release.tools.echo]
hints = { readOnlyHint = false, openWorldHint = true }

[mcp_servers.both]
url = %[1]q

[apps.both]
approvers = ["group:leads"]
approval_channel = "both"

[apps.both.tools.echo]
hints = { readOnlyHint = false, openWorldHint = true }

[serve]
session_secret_file = %[2]q

[serve.auth]
tokens_file = %[3]q

[serve.rate_limit]
calls_per_second = 100000
burst = 100000
`

// teamFleet is the replicas of one team inbox test, on one store.
type teamFleet struct {
	db         *pgtest.DB
	store, cfg string
}

func newTeamFleet(t *testing.T) *teamFleet {
	t.Helper()
	upstream := startCountingUpstream(t)
	dir := t.TempDir()
	secretFile := writeSessionSecret(t, dir)
	tokens := identitytest.WriteTokens(t, dir, map[string]identity.Principal{
		"dana-token":    {Name: "dana", Groups: []string{"dev"}},
		"mallory-token": {Name: "mallory", Groups: []string{"dev"}},
		"lena-token":    {Name: "lena", Groups: []string{"leads"}},
		"leo-token":     {Name: "leo", Groups: []string{"leads", "dev"}},
	})
	db := pgtest.Shared(t)
	return &teamFleet{db: db, store: db.URL, cfg: writeFile(t, "team-inbox.toml", fmt.Sprintf(teamInboxConfig, upstream, secretFile, tokens))}
}

// start runs one replica with extra flags and waits until it lists the
// tools.
func (f *teamFleet) start(t *testing.T, extra ...string) *opsServe {
	t.Helper()
	args := append([]string{"--listen", "127.0.0.1:0", "--config", f.cfg, "--store", f.store, "--audit", filepath.Join(t.TempDir(), "audit.jsonl")}, extra...)
	s := launchServe(t, twBin, nil, args...)
	s.waitListening(t)
	eventually(t, 60*time.Second, "the replica to list the tools", func() bool {
		h, body := coreModern("dana-token", "tools/list", "", map[string]any{}, true)
		r := corePost(t, s.url, h, body)
		return strings.Contains(r.body, "deploy__echo") && strings.Contains(r.body, "release__echo") && strings.Contains(r.body, "both__echo")
	})
	return s
}

// teamLegacyClient is mcp-go's client on a 2025-11-25 session with
// replica s as token, answering prompts with h.
func teamLegacyClient(t *testing.T, s *opsServe, token string, h client.ElicitationHandler) *goClient {
	t.Helper()
	return legacyElicitingClient(t, s.url, "e2e-team", 90*time.Second, map[string]string{"Authorization": "Bearer " + token}, h)
}

// teamAskView is one ask as GET /inbox/api/asks shows it.
type teamAskView struct {
	ID        string `json:"id"`
	Tool      string `json:"tool"`
	Server    string `json:"server"`
	Asker     string `json:"asker"`
	Approvers string `json:"approvers"`
	Arguments string `json:"arguments"`
	Own       bool   `json:"own"`
	MayAnswer bool   `json:"may_answer"`
	Options   []struct {
		ID string `json:"id"`
	} `json:"options"`
}

// teamAPI calls the team inbox API of replica s as token ("" none).
func teamAPI(t *testing.T, s *opsServe, token, method, path string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// teamAsks lists the asks token may see on replica s.
func teamAsks(t *testing.T, s *opsServe, token string) []teamAskView {
	t.Helper()
	code, body := teamAPI(t, s, token, http.MethodGet, "/inbox/api/asks", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /inbox/api/asks as %s: %d %s", token, code, body)
	}
	var out struct{ Asks []teamAskView }
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("GET /inbox/api/asks: %v: %s", err, body)
	}
	return out.Asks
}

// waitTeamAsk waits until token sees an ask of tool on server on replica s.
func waitTeamAsk(t *testing.T, s *opsServe, token, server, tool string) teamAskView {
	t.Helper()
	var found teamAskView
	eventually(t, 30*time.Second, "the ask in the team inbox", func() bool {
		for _, a := range teamAsks(t, s, token) {
			if a.Server == server && a.Tool == tool {
				found = a
				return true
			}
		}
		return false
	})
	return found
}

// teamCallAsync makes a 2026-07-28 call of echo on replica s as token in
// its own goroutine; its answer arrives on the channel.
func teamCallAsync(t *testing.T, s *opsServe, token, conv, tool, msg string) <-chan coreHTTP {
	out := make(chan coreHTTP, 1)
	go func() { out <- storeCall(t, s, token, conv, tool, map[string]any{"message": msg}, nil) }()
	return out
}

// await waits for a call's answer.
func await(t *testing.T, c <-chan coreHTTP, what string) coreHTTP {
	t.Helper()
	select {
	case r := <-c:
		return r
	case <-time.After(60 * time.Second):
		t.Fatalf("%s: no answer within 60s", what)
		return coreHTTP{}
	}
}

// stillWaiting fails the test when the call already answered.
func stillWaiting(t *testing.T, c <-chan coreHTTP) {
	t.Helper()
	select {
	case r := <-c:
		t.Fatalf("the call did not wait for a lead: %s", r.body)
	default:
	}
}

// approvedBy reports whether replica s's audit log records an approval
// of server's echo given by principal.
func approvedBy(t *testing.T, s *opsServe, server, principal string) bool {
	t.Helper()
	b, _ := os.ReadFile(s.audit)
	for _, line := range strings.Split(string(b), "\n") {
		var r struct {
			Event    string `json:"event"`
			By       string `json:"by"`
			Decision struct {
				Server string `json:"server"`
			} `json:"decision"`
		}
		if json.Unmarshal([]byte(line), &r) == nil && r.Event == "approve" && r.By == principal && r.Decision.Server == server {
			return true
		}
	}
	return false
}

// A member's call that needs a lead's approval waits on replica A while a
// lead answers it through replica B; a non-approver neither sees nor
// answers it; two leads answering at once on A and B: one wins and the
// other is told; "always for the team" covers the next member's call on
// either replica; with nobody answering the call is denied in time,
// naming who must approve and where. And the page, in a real Chromium.
func TestTeamInboxAcrossReplicasOnPostgres(t *testing.T) {
	t.Parallel()
	f := newTeamFleet(t)
	a, b := f.start(t), f.start(t)

	t.Run("a member's call waits until a lead approves it on another replica", func(t *testing.T) {
		call := teamCallAsync(t, a, "dana-token", "c1", "deploy__echo", "m1")
		ask := waitTeamAsk(t, b, "lena-token", "deploy", "echo")
		if ask.Asker != "dana" || !ask.MayAnswer || ask.Own || ask.Approvers != "group:leads" || !strings.Contains(ask.Arguments, "m1") {
			t.Fatalf("lena sees %+v", ask)
		}
		stillWaiting(t, call)
		// A non-approver cannot see the ask, nor answer it.
		for _, x := range teamAsks(t, b, "mallory-token") {
			if x.ID == ask.ID {
				t.Fatalf("mallory (no approver) sees the ask: %+v", x)
			}
		}
		if code, body := teamAPI(t, b, "mallory-token", http.MethodPost, "/inbox/api/asks/"+ask.ID, map[string]string{"option": "allow_once"}); code != http.StatusForbidden || !strings.Contains(body, "group:leads") {
			t.Fatalf("mallory's answer: %d %s", code, body)
		}
		// The asker sees their own ask, waiting, and may not answer it.
		own := waitTeamAsk(t, a, "dana-token", "deploy", "echo")
		if own.ID != ask.ID || !own.Own || own.MayAnswer {
			t.Fatalf("dana sees %+v", own)
		}
		if code, body := teamAPI(t, a, "dana-token", http.MethodPost, "/inbox/api/asks/"+ask.ID, map[string]string{"option": "allow_once"}); code != http.StatusForbidden {
			t.Fatalf("dana answering her own ask: %d %s", code, body)
		}
		if code, _ := teamAPI(t, b, "", http.MethodGet, "/inbox/api/asks", nil); code != http.StatusUnauthorized {
			t.Fatalf("the API without a token: %d", code)
		}
		stillWaiting(t, call)
		if code, body := teamAPI(t, b, "lena-token", http.MethodPost, "/inbox/api/asks/"+ask.ID, map[string]string{"option": "allow_once"}); code != http.StatusOK {
			t.Fatalf("lena's answer: %d %s", code, body)
		}
		if r := await(t, call, "dana's call"); !seenOnce(r, "m1") {
			t.Fatalf("dana's call after lena approved it: %s", r.body)
		}
		eventually(t, 10*time.Second, "A's audit to record the approval by lena", func() bool { return approvedBy(t, a, "deploy", "lena") })
		if again := teamAsks(t, b, "lena-token"); len(again) != 0 {
			t.Errorf("the answered ask is still listed: %+v", again)
		}
	})

	t.Run("two leads answering at once on two replicas: one wins, the other is told", func(t *testing.T) {
		call := teamCallAsync(t, a, "dana-token", "c2", "deploy__echo", "m2")
		ask := waitTeamAsk(t, b, "leo-token", "deploy", "echo")
		type reply struct {
			code int
			body string
		}
		replies := make([]reply, 2)
		var start, done sync.WaitGroup
		start.Add(1)
		for i, who := range []struct {
			s     *opsServe
			token string
		}{{a, "lena-token"}, {b, "leo-token"}} {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				code, body := teamAPI(t, who.s, who.token, http.MethodPost, "/inbox/api/asks/"+ask.ID, map[string]string{"option": "allow_once"})
				replies[i] = reply{code, body}
			}()
		}
		start.Done()
		done.Wait()
		won, lost := 0, 0
		for _, r := range replies {
			switch {
			case r.code == http.StatusOK:
				won++
			case r.code == http.StatusConflict && strings.Contains(r.body, "already answered"):
				lost++
			}
		}
		if won != 1 || lost != 1 {
			t.Fatalf("answers: %+v, want one 200 and one 409 saying it was already answered", replies)
		}
		if r := await(t, call, "dana's second call"); !seenOnce(r, "m2") {
			t.Fatalf("dana's call: %s", r.body)
		}
	})

	t.Run("always for the team covers the next member's call on either replica", func(t *testing.T) {
		call := teamCallAsync(t, a, "dana-token", "c3", "release__echo", "m3")
		ask := waitTeamAsk(t, b, "lena-token", "release", "echo")
		if code, body := teamAPI(t, b, "lena-token", http.MethodPost, "/inbox/api/asks/"+ask.ID, map[string]string{"option": "always", "scope": "team"}); code != http.StatusOK {
			t.Fatalf("lena's always for the team: %d %s", code, body)
		}
		if r := await(t, call, "dana's call"); !seenOnce(r, "m3") {
			t.Fatalf("dana's call: %s", r.body)
		}
		// The grant is the store's, scoped to the team, given by lena.
		rows, err := f.db.Cluster.Query(f.db.Name, "SELECT server, tool, scope_kind, scope_name, granted_by FROM tw_grants WHERE revoked_at IS NULL")
		if err != nil || rows != "release|echo|team||lena" {
			t.Fatalf("the store's live grants: %q, %v; want release|echo|team||lena", rows, err)
		}
		for i, s := range []*opsServe{b, a} {
			msg := fmt.Sprintf("m3-%d", i)
			r := storeCall(t, s, "mallory-token", "c3", "release__echo", map[string]any{"message": msg}, nil)
			if !seenOnce(r, msg) {
				t.Fatalf("mallory's call on replica %d after the team grant: %s", i, r.body)
			}
		}
		if asks := teamAsks(t, b, "lena-token"); len(asks) != 0 {
			t.Errorf("mallory's covered calls were asked about: %+v", asks)
		}
	})

	t.Run("under approval_channel both, a lead's own prompt and the team inbox race: the first answer wins", func(t *testing.T) {
		// lena is a lead: her client is prompted (she takes her time), and
		// the ask is in the team inbox too, where leo answers first.
		human := &slowApprover{delay: time.Minute, answer: "deny"}
		lena := teamLegacyClient(t, a, "lena-token", human)
		out := make(chan string, 1)
		go func() {
			text, isErr := lena.call(t, "both__echo", map[string]any{"message": "m6"})
			if isErr {
				text = "error: " + text
			}
			out <- text
		}()
		ask := waitTeamAsk(t, b, "leo-token", "both", "echo")
		if ask.Asker != "lena" || !ask.MayAnswer {
			t.Fatalf("leo sees %+v", ask)
		}
		if code, body := teamAPI(t, b, "leo-token", http.MethodPost, "/inbox/api/asks/"+ask.ID, map[string]string{"option": "allow_once"}); code != http.StatusOK {
			t.Fatalf("leo's answer: %d %s", code, body)
		}
		select {
		case text := <-out:
			if text != "echo: m6 (seen 1)" {
				t.Fatalf("lena's call after leo answered: %q", text)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("lena's call still waits for her own prompt after leo answered in the team inbox")
		}
		if human.asked.Load() != 1 {
			t.Errorf("lena's client was prompted %d times, want once", human.asked.Load())
		}
		eventually(t, 10*time.Second, "A's audit to record the approval by leo", func() bool { return approvedBy(t, a, "both", "leo") })
	})

	t.Run("with no lead answering, the call is denied in time, naming who must approve and where", func(t *testing.T) {
		c := f.start(t, "--approval-timeout", "2s")
		began := time.Now()
		r := storeCall(t, c, "dana-token", "c4", "deploy__echo", map[string]any{"message": "m4"}, nil)
		if !r.isError() || !strings.Contains(r.text(), "group:leads") || !strings.Contains(r.text(), c.base+"/inbox") || !strings.Contains(r.text(), "2s") {
			t.Fatalf("the unanswered call: %s", r.body)
		}
		if took := time.Since(began); took > 20*time.Second {
			t.Errorf("the unanswered call took %s with a 2s timeout", took)
		}
		for _, x := range teamAsks(t, b, "lena-token") {
			t.Errorf("the expired ask is still listed: %+v", x)
		}
	})

	t.Run("a lead approves by clicking in the page, in a real Chromium", func(t *testing.T) {
		br := browser.Start(t)
		// The arguments a tool call carries are shown as text, never run.
		msg := `m5 <img src=x onerror="window.pwned=1">`
		call := teamCallAsync(t, a, "dana-token", "c5", "deploy__echo", msg)
		if code := br.Goto(b.base + "/inbox"); code != http.StatusOK {
			t.Fatalf("GET /inbox: %d", code)
		}
		br.Wait("#token-form")
		br.Eval(`(document.querySelector("#token").value = "lena-token", true)`, nil)
		br.Click("#token-save")
		br.Wait(`#status[data-state="live"]`)
		if v := br.Text("#viewer"); !strings.Contains(v, "lena") {
			t.Fatalf("the page is signed in as %q", v)
		}
		ask := waitTeamAsk(t, b, "lena-token", "deploy", "echo")
		sel := `article.ask[data-ask-id="` + ask.ID + `"]`
		br.Wait(sel)
		if who := br.Text(sel + ` [data-field="asker"]`); who != "dana" {
			t.Errorf("asked by %q", who)
		}
		if args := br.Text(sel + ` [data-field="arguments"]`); !strings.Contains(args, `<img src=x onerror=`) {
			t.Errorf("the arguments as shown: %q", args)
		}
		stillWaiting(t, call)
		br.Click(`button[data-ask-id="` + ask.ID + `"][data-option="allow_once"]`)
		br.Wait(sel + `[data-state="answered"]`)
		var pwned bool
		br.Eval(`window.pwned === 1`, &pwned)
		if pwned || br.Count(sel+" img") != 0 {
			t.Error("the arguments' markup ran in the page")
		}
		if r := await(t, call, "dana's call"); !seenOnce(r, msg) {
			t.Fatalf("dana's call after the click: %s", r.body)
		}
		var stored string
		br.Eval(`sessionStorage.getItem("toolwarden-team-inbox-token")`, &stored)
		var cookies string
		br.Eval(`document.cookie`, &cookies)
		if stored != "lena-token" || cookies != "" {
			t.Errorf("token kept %q, cookies %q: the token lives in sessionStorage only", stored, cookies)
		}
		if p := br.Problems(); len(p) != 0 {
			t.Errorf("console errors or CSP violations: %v", p)
		}
	})

	// Last: it changes the config every replica reads.
	t.Run("a lead removed from the approvers after the ask: their answer does not hold", func(t *testing.T) {
		call := teamCallAsync(t, a, "dana-token", "c7", "deploy__echo", "m7")
		ask := waitTeamAsk(t, b, "lena-token", "deploy", "echo")
		reloads := strings.Count(a.log.String(), "config reloaded")
		approvals := strings.Count(auditLines(t, a, `"event":"approve"`), `"by":"lena"`)
		cfg, err := os.ReadFile(f.cfg)
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(cfg), "[apps.deploy]\napprovers = [\"group:leads\"]", "[apps.deploy]\napprovers = [\"group:ops\"]", 1)
		if edited == string(cfg) {
			t.Fatal("the config edit matched nothing")
		}
		if err := os.WriteFile(f.cfg, []byte(edited), 0o600); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "replica A to reload the config", func() bool { return strings.Count(a.log.String(), "config reloaded") > reloads })
		// B shows and takes the answer by the levels stored with the ask;
		// A applies it under the rules in force, where lena is no approver.
		if code, body := teamAPI(t, b, "lena-token", http.MethodPost, "/inbox/api/asks/"+ask.ID, map[string]string{"option": "allow_once"}); code != http.StatusOK {
			t.Fatalf("lena's answer: %d %s", code, body)
		}
		r := await(t, call, "dana's call")
		if !r.isError() || !strings.Contains(r.text(), "does not hold") || !strings.Contains(r.text(), "group:ops") {
			t.Fatalf("dana's call approved by a lead no longer an approver: %s", r.body)
		}
		if n := strings.Count(auditLines(t, a, `"event":"approve"`), `"by":"lena"`); n != approvals {
			t.Errorf("A's audit has %d approvals by lena, %d before: the refused one was recorded", n, approvals)
		}
	})
}

// auditLines returns replica s's audit lines that contain sub.
func auditLines(t *testing.T, s *opsServe, sub string) string {
	t.Helper()
	b, _ := os.ReadFile(s.audit)
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, sub) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
