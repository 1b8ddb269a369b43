package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/store/pgtest"
	"github.com/toolwarden/toolwarden/internal/telemetry/otlptest"
)

// A 2025-era session (Mcp-Session-Id) started on replica A and continued
// on replica B of one store: B verifies the sealed id without a lookup,
// keys the same host session (the principal and the id), and loads the
// session's state (approvals, taint) from the store, so every request of
// the session is served by either replica. Only asking by elicitation
// stays with the replica that initialised the session (docs/serve.md,
// Replicas): B says so instead of asking.

// legacyCall posts a 2025-11-25 tools/call in session sid by token to
// replica s, as a client whose request a load balancer sent there would.
func legacyCall(t *testing.T, s *opsServe, token, sid, tool string, args map[string]any) coreHTTP {
	t.Helper()
	h := map[string]string{"Authorization": "Bearer " + token, "Mcp-Session-Id": sid, "Mcp-Protocol-Version": legacyEra}
	return corePost(t, s.url, h, map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
}

func TestA2025SessionStartedOnOneReplicaIsServedByAnother(t *testing.T) {
	db := pgtest.Shared(t)
	f := newStoreFleet(t, db.URL)
	a, b := f.start(t), f.start(t)

	ask := answers("allow_session")
	onA := storeClient(t, a, legacyEra, "alice-token", ask)
	if out, isErr := onA.call(t, "gate__echo", map[string]any{"message": "on-A"}); isErr || out != "echo: on-A (seen 1)" || ask.count() != 1 {
		t.Fatalf("allowing for the session on A: %q (error %v, asked %d times)", out, isErr, ask.count())
	}
	sid := onA.GetSessionId()
	if !strings.HasPrefix(sid, "tws1.") {
		t.Fatalf("A issued no sealed session id: %q", sid)
	}

	t.Run("the session's approval given on A holds on B without an ask", func(t *testing.T) {
		r := legacyCall(t, b, "alice-token", sid, "gate__echo", map[string]any{"message": "on-B"})
		if r.status != http.StatusOK || !seenOnce(r, "on-B") {
			t.Fatalf("B serving A's session (status %d): %s", r.status, r.body)
		}
	})

	t.Run("taint gathered on A blocks the exfiltrating call on B", func(t *testing.T) {
		for _, leg := range []struct {
			tool string
			args map[string]any
		}{{"tri__big", map[string]any{"n": 8}}, {"tri__headers", map[string]any{}}} {
			if out, isErr := onA.call(t, leg.tool, leg.args); isErr {
				t.Fatalf("%s on A: %s", leg.tool, out)
			}
		}
		r := legacyCall(t, b, "alice-token", sid, "tri__echo", map[string]any{"message": "exfil-via-B"})
		if !r.isError() || !strings.Contains(r.text(), "lethal_trifecta") {
			t.Fatalf("the exfiltrating call on B: want a trifecta deny, got (status %d): %s", r.status, r.body)
		}
		// The upstream never ran it: the first echo of the message is this one.
		if out, isErr := onA.call(t, "up__echo", map[string]any{"message": "exfil-via-B"}); isErr || out != "echo: exfil-via-B (seen 1)" {
			t.Fatalf("the denied call reached the upstream: %q", out)
		}
	})

	t.Run("another principal presenting the id on B gets 404", func(t *testing.T) {
		r := legacyCall(t, b, "bob-token", sid, "up__echo", map[string]any{"message": "bob-with-alices-id"})
		if r.status != http.StatusNotFound {
			t.Fatalf("bob with alice's session id on B: status %d: %s", r.status, r.body)
		}
	})

	t.Run("an ask on B, which did not initialise the session, is not made there and says why", func(t *testing.T) {
		ask2 := answers("allow_once")
		fresh := storeClient(t, a, legacyEra, "alice-token", ask2)
		r := legacyCall(t, b, "alice-token", fresh.GetSessionId(), "gate__echo", map[string]any{"message": "asked-on-B"})
		if !r.isError() || !strings.Contains(r.text(), "another replica") || ask2.count() != 0 {
			t.Fatalf("an ask on B in a session A initialised: want a tool error naming the other replica, got (asked %d times): %s", ask2.count(), r.body)
		}
		// Asked on A, the replica that can reach the client, it runs once.
		if out, isErr := fresh.call(t, "gate__echo", map[string]any{"message": "asked-on-B"}); isErr || out != "echo: asked-on-B (seen 1)" || ask2.count() != 1 {
			t.Fatalf("the same call on A: %q (error %v, asked %d times)", out, isErr, ask2.count())
		}
	})

	t.Run("both replicas' records of the session are in the store's audit table", func(t *testing.T) {
		var rows map[string]int
		eventually(t, 10*time.Second, "audit rows of both replicas", func() bool {
			rows = auditByReplica(t, db)
			return len(rows) == 2
		})
	})
}

// auditByReplica counts alice's 2025-era session records in tw_audit per
// replica that wrote them.
func auditByReplica(t *testing.T, db *pgtest.DB) map[string]int {
	t.Helper()
	out, err := db.Cluster.Query(db.Name, "SELECT replica, count(*) FROM tw_audit WHERE session LIKE 'alice/s/%' GROUP BY replica")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, line := range strings.Split(out, "\n") {
		name, n, ok := strings.Cut(line, "|")
		if ok {
			m[name], _ = strconv.Atoi(n)
		}
	}
	return m
}

// With telemetry on and a store, each audit record goes to both: the
// OTLP log export (a real collector) and the store's tw_audit table, with
// the same JSON body, and the call is not slowed by either.
func TestServeExportsEachAuditRecordToItsCollectorAndItsStore(t *testing.T) {
	col := otlptest.Start(t)
	db := pgtest.Shared(t)
	cfg := writeFile(t, "serve.toml", fmt.Sprintf("[mcp_servers.ts]\ncommand = %q\n", testServer))
	s := launchServe(t, twBin, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + col.HTTPEndpoint, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BLRP_SCHEDULE_DELAY=50", "OTEL_TRACES_EXPORTER=", "OTEL_METRICS_EXPORTER=", "OTEL_LOGS_EXPORTER=", "OTEL_SDK_DISABLED=",
	}, "--listen", "127.0.0.1:0", "--config", cfg, "--store", db.URL, "--audit", filepath.Join(t.TempDir(), "audit.jsonl"))
	s.waitListening(t)
	const msg = "audited-twice"
	eventually(t, 30*time.Second, "the echo through serve", func() bool {
		h, body := coreModern("", "tools/call", "ts__echo", map[string]any{"name": "ts__echo", "arguments": map[string]any{"message": msg},
			"_meta": map[string]any{"io.toolwarden/conversation": msg}}, false)
		return strings.Contains(corePost(t, s.url, h, body).text(), msg)
	})
	col.WaitLogs(t, func(l []otlptest.Log) bool {
		for _, x := range l {
			if x.Attributes["toolwarden.audit.event"] == "check" && x.Attributes["toolwarden.session"] == "local/c/"+msg {
				return true
			}
		}
		return false
	})
	eventually(t, 10*time.Second, "the check record in tw_audit", func() bool {
		out, err := db.Cluster.Query(db.Name, "SELECT count(*) FROM tw_audit WHERE event = 'check' AND session = 'local/c/"+msg+"'")
		return err == nil && out != "0"
	})
}
