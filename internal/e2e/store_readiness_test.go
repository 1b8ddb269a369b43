package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/store/pgtest"
)

// Through the real binary on a private Postgres: while Postgres is
// stopped, the replica is not ready (a load balancer sends its traffic
// elsewhere) but alive (a supervisor does not restart it); a client's
// refusal says only that the shared store is unreachable and the call was
// not made (no database host, port, name, password or session key), while
// serve's log and audit record carry the cause; once Postgres is back the
// replica is ready and serves again, not restarted.
func TestAReplicaIsNotReadyButAliveWhileItsStoreIsDownAndTellsClientsNoStoreInternals(t *testing.T) {
	t.Parallel()
	cluster := pgtest.Start(t) // its own: this test stops it
	db := cluster.CreateDB(t)
	f := newStoreFleet(t, cluster.URL(db))
	s := f.start(t)
	pid := s.cmd.Process.Pid
	// Ready once every upstream has started (listing their tools can come
	// first) and the store answers.
	eventually(t, 15*time.Second, "/readyz 200 with the store up", func() bool { return readyz(s) == http.StatusOK })
	// The conversation's session is saved while the store is up, so the
	// refused call below is one the store knows.
	if r := storeCall(t, s, "alice-token", "conv-readiness", "up__echo", map[string]any{"message": "before"}, nil); r.isError() {
		t.Fatalf("a call with the store up: %s", r.body)
	}

	// An ask bob answers once the store is down (its request state is
	// redeemed in the store).
	pending := storeCall(t, s, "bob-token", "conv-pending", "gate__echo", map[string]any{"message": "pending"}, nil)
	if !asked(pending) {
		t.Fatalf("bob was not asked: %s", pending.body)
	}

	if err := cluster.Stop(); err != nil {
		t.Fatal(err)
	}
	down := time.Now()
	eventually(t, 2500*time.Millisecond, "/readyz to answer 503 with the store stopped", func() bool {
		return readyz(s) == http.StatusServiceUnavailable
	})
	t.Logf("/readyz answered 503 %s after Postgres stopped", time.Since(down).Round(time.Millisecond))
	body := probeBody(t, s.base+"/readyz")
	if !strings.Contains(body, `"store":"unreachable"`) {
		t.Errorf("/readyz body does not name the store unreachable: %s", body)
	}
	if code := probeStatus(s.base + "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz with the store down: %d, want 200 (an outage must not restart replicas)", code)
	}

	r := storeCall(t, s, "alice-token", "conv-readiness", "up__echo", map[string]any{"message": "during"}, nil)
	text := r.text()
	if !r.isError() || !strings.Contains(text, "shared store is unreachable") || !strings.Contains(text, "not made") {
		t.Fatalf("a call with the store down was not refused as one on an unreachable store: %s", r.body)
	}
	// The other ways a caller meets the outage: a call a remembered
	// approval would decide (asked, or refused), and an answer whose
	// request state cannot be redeemed.
	others := map[string]coreHTTP{
		"a call on remembered approvals": storeCall(t, s, "alice-token", "conv-readiness", "gate__echo", map[string]any{"message": "remembered"}, nil),
		"an answer to an ask":            storeCall(t, s, "bob-token", "conv-pending", "gate__echo", map[string]any{"message": "pending"}, answered(pending, "allow_once")),
	}
	internals := map[string]string{
		"the database host:port": "127.0.0.1:" + strconv.Itoa(cluster.Port()),
		"the database name":      db,
		"the password":           cluster.Password(),
		"the store URL's scheme": "postgres://",
	}
	for _, key := range auditSessions(t, s.audit) {
		internals["the host session key "+key] = key
	}
	for what, v := range internals {
		if strings.Contains(r.body, v) {
			t.Errorf("the refusal a client got names %s (%q): %s", what, v, text)
		}
	}
	t.Logf("the refusal with the store down: %s", text)
	for how, o := range others {
		if !(o.isError() || asked(o)) || strings.Contains(o.text(), "(seen") {
			t.Errorf("%s with the store down was neither refused nor asked: %s", how, o.body)
		}
		for what, v := range internals {
			if strings.Contains(o.body, v) {
				t.Errorf("%s with the store down: the answer names %s (%q): %s", how, what, v, o.body)
			}
		}
		t.Logf("%s with the store down: %s", how, o.body)
	}
	// The cause is where an operator looks: serve's log and the audit file.
	// (Other lines of the log name the store too: the line that counts is
	// the refusal's, with the session it refused and the store's error.)
	eventually(t, 5*time.Second, "serve's log to say which session's call was refused and why", func() bool {
		for _, line := range strings.Split(s.log.String(), "\n") {
			if strings.Contains(line, "a call is refused") && strings.Contains(line, "conv-readiness") &&
				strings.Contains(line, "127.0.0.1:"+strconv.Itoa(cluster.Port())) {
				return true
			}
		}
		return false
	})
	eventually(t, 5*time.Second, "serve's log to say why bob's answer was refused", func() bool {
		for _, line := range strings.Split(s.log.String(), "\n") {
			if strings.Contains(line, "a request state was refused") && strings.Contains(line, "conv-pending") &&
				strings.Contains(line, "127.0.0.1:"+strconv.Itoa(cluster.Port())) {
				return true
			}
		}
		return false
	})
	if a := readAudit(t, s.audit); !strings.Contains(a, "127.0.0.1:"+strconv.Itoa(cluster.Port())) || !strings.Contains(a, db) {
		t.Errorf("the audit record of the refused call does not carry the cause (the store's address and database)")
	}
	if strings.Contains(s.log.String(), cluster.Password()) || strings.Contains(readAudit(t, s.audit), cluster.Password()) {
		t.Errorf("serve's log or audit carries the store's password")
	}

	if err := cluster.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "/readyz to answer 200 once Postgres is back", func() bool {
		return readyz(s) == http.StatusOK
	})
	if r := storeCall(t, s, "alice-token", "conv-readiness", "up__echo", map[string]any{"message": "after"}, nil); r.isError() {
		t.Errorf("a call once the store is back: %s", r.body)
	}
	if s.cmd.Process.Pid != pid {
		t.Fatal("the replica was restarted")
	}
}

func probeStatus(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func probeBody(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func readAudit(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the audit file: %v", err)
	}
	return string(b)
}

// auditSessions is every host session key the audit file's records name.
func auditSessions(t *testing.T, path string) []string {
	t.Helper()
	seen := map[string]bool{}
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(readAudit(t, path)), "\n") {
		var rec struct {
			Session string `json:"session"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Session != "" && !seen[rec.Session] {
			seen[rec.Session] = true
			keys = append(keys, rec.Session)
		}
	}
	if len(keys) == 0 {
		t.Fatalf("no session in the audit file %s", path)
	}
	return keys
}
