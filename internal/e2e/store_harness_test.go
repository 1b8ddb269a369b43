package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolwarden/toolwarden/internal/identity"
	"github.com/toolwarden/toolwarden/internal/identity/identitytest"
)

// The harness of the shared-store tests (issue #25): several `toolwarden
// serve` replicas started from one config (one upstream, one session
// secret, one tokens file) on one store, each on its own port, and
// clients of either protocol era pinned to one replica.

// storeFleet is what a set of replicas shares: the config they are all
// started with and the store URL they all name.
type storeFleet struct {
	store    string // the --store URL
	cfg      string // the config every replica reads
	upstream string // testserver -count-echo on streamable HTTP
	replicas []*opsServe
}

// storeConfig serves one testserver (-count-echo: each echo says how many
// times that message was echoed, so a call run twice shows) under three
// names: up (its tools as the default policy decides them: echo is
// allowed), gate (echo made an open-world write by config hints: asked, and
// an answer may be remembered, so "always" grants are made and used) and tri (the lethal trifecta: big reads private data,
// headers sees untrusted content, echo can exfiltrate; the trifecta
// plugin denies the third leg). Callers are alice, bob, carol, dave, erin
// and frank (tokens "alice-token", ...); one session secret for every replica.
const storeConfig = `
[mcp_servers.up]
url = %[1]q

[mcp_servers.gate]
url = %[1]q

[apps.gate.tools.echo]
hints = { readOnlyHint = false, openWorldHint = true }

[mcp_servers.tri]
url = %[1]q

[apps.tri.tools.big]
hints = { reads_private_data = true }

[apps.tri.tools.headers]
hints = { sees_untrusted_content = true }

[apps.tri.tools.echo]
hints = { can_exfiltrate = true }

[policies.trifecta]
builtin = "trifecta"
apps = ["tri"]
config = { mode = "deny" }

[serve]
session_secret_file = %[2]q

[serve.auth]
tokens_file = %[3]q

# The tests and benchmarks call fast; the rate limit is not what they test.
[serve.rate_limit]
calls_per_second = 1000000
burst = 1000000
`

// newStoreFleet writes the shared config in front of a fresh counting
// upstream; no replica is started yet.
func newStoreFleet(t testing.TB, storeURL string) *storeFleet {
	t.Helper()
	f := &storeFleet{store: storeURL, upstream: startCountingUpstream(t)}
	dir := t.TempDir()
	secretFile := writeSessionSecret(t, dir)
	tokens := identitytest.WriteTokens(t, dir, map[string]identity.Principal{
		"alice-token": {Name: "alice", Groups: []string{"dev"}},
		"bob-token":   {Name: "bob", Groups: []string{"dev"}},
		"carol-token": {Name: "carol", Groups: []string{"dev"}},
		"dave-token":  {Name: "dave", Groups: []string{"dev"}},
		"erin-token":  {Name: "erin", Groups: []string{"dev"}},
		"frank-token": {Name: "frank", Groups: []string{"dev"}},
	})
	f.cfg = writeFile(t, "store-serve.toml", fmt.Sprintf(storeConfig, f.upstream, secretFile, tokens))
	return f
}

// start runs one more replica on the fleet's store and config, waits
// until it lists every server's tools, and returns it. Every other
// replica is given the store by $TOOLWARDEN_STORE (as a Kubernetes Secret
// would), the others by --store, so both ways are run.
func (f *storeFleet) start(t testing.TB) *opsServe {
	t.Helper()
	s := f.launch(t, len(f.replicas))
	s.waitListening(t)
	f.waitReady(t, s)
	f.replicas = append(f.replicas, s)
	return s
}

// launch starts replica number i and returns at once.
func (f *storeFleet) launch(t testing.TB, i int) *opsServe {
	t.Helper()
	args := []string{"--listen", "127.0.0.1:0", "--config", f.cfg, "--audit", filepath.Join(t.TempDir(), "audit.jsonl")}
	var env []string
	if i%2 == 1 {
		env = []string{"TOOLWARDEN_STORE=" + f.store}
	} else {
		args = append(args, "--store", f.store)
	}
	return launchServe(t, twBin, env, args...)
}

// startAlone runs serve on the fleet's config and upstream but with no
// store (its "always" approvals in a file of its own, sessions and request
// states in its memory): the baseline a store's cost is measured against.
func (f *storeFleet) startAlone(t testing.TB) *opsServe {
	t.Helper()
	dir := t.TempDir()
	s := launchServe(t, twBin, nil, "--listen", "127.0.0.1:0", "--config", f.cfg,
		"--audit", filepath.Join(dir, "audit.jsonl"), "--approvals", filepath.Join(dir, "approvals.json"))
	s.waitListening(t)
	f.waitReady(t, s)
	return s
}

// waitReady waits until replica s lists the tools of every server.
func (f *storeFleet) waitReady(t testing.TB, s *opsServe) {
	t.Helper()
	eventually(t, 60*time.Second, "the replica to list every server's tools", func() bool {
		select {
		case <-s.exited:
			t.Fatalf("the replica exited (%v):\n%s", s.err, s.log.String())
		default:
		}
		h, body := coreModern("alice-token", "tools/list", "", map[string]any{}, true)
		r := corePost(t, s.url, h, body)
		return strings.Contains(r.body, "up__echo") && strings.Contains(r.body, "gate__echo") && strings.Contains(r.body, "tri__headers")
	})
}

// startN starts n replicas.
func (f *storeFleet) startN(t testing.TB, n int) []*opsServe {
	t.Helper()
	for range n {
		f.start(t)
	}
	return f.replicas
}

// storeCall is a 2026-07-28 tools/call by token in conversation conv, with
// extra params (requestState, inputResponses), to replica s.
func storeCall(t testing.TB, s *opsServe, token, conv, tool string, args map[string]any, extra map[string]any) coreHTTP {
	t.Helper()
	return coreCallIn(t, s.url, token, conv, tool, args, extra)
}

// storePostWith is corePost over the HTTP client hc (its connections
// kept), and reports a failed request as status 0 with the error as body.
func storePostWith(t testing.TB, hc *http.Client, url string, header map[string]string, body any) coreHTTP {
	t.Helper()
	out, err := postRPC(t, hc, url, header, body)
	if err != nil {
		return coreHTTP{body: err.Error()}
	}
	return out
}

// asked reports whether r is an input request (the call was asked about).
func asked(r coreHTTP) bool { return r.result()["resultType"] == "input_required" }

// seenOnce checks an echo answered "echo: msg (seen 1)": run, once, for
// this call.
func seenOnce(r coreHTTP, msg string) bool {
	return !r.isError() && r.text() == fmt.Sprintf("echo: %s (seen 1)", msg)
}

// storeClient is mcp-go's client on replica s for token, in era version,
// answering asks from elicit (nil: it cannot elicit).
func storeClient(t *testing.T, s *opsServe, version, token string, elicit *scripted) *goClient {
	t.Helper()
	return coreClient(t, s.url, version, elicit, map[string]string{"Authorization": "Bearer " + token})
}

// kill ends replica s with SIGKILL, as a crash or an OOM kill would, and
// waits until it is gone.
func (s *opsServe) kill(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("a replica did not die within 20s of SIGKILL")
	}
}

// stop ends replica s with SIGTERM (a graceful shutdown) and waits.
func (s *opsServe) stop(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("a replica did not stop within 60s of SIGTERM:\n%s", s.log.String())
	}
}

// twRun runs the real binary with args and returns its output and exit
// code.
func twRun(t testing.TB, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(twBin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), exitStatus(t, err)
}

// legacyEra and modernEra are the two protocol eras a client may speak.
var (
	legacyEra = mcp.ProtocolVersion20251125
	modernEra = mcp.ProtocolVersion20260728
)

// readyz is replica s's readiness probe status.
func readyz(s *opsServe) int {
	resp, err := http.Get(s.base + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}
