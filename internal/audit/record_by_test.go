package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
)

func TestApproveRecordSaysWhoApprovedAndWhoseCallsTheGrantCovers(t *testing.T) {
	var buf bytes.Buffer
	l := New(&buf)
	l.Write(Record{Time: time.Unix(0, 0).UTC(), Event: "approve", Session: "s", Scope: "always",
		By: "alice", Grant: &session.GrantScope{Kind: session.ScopeGroup, Name: "ops"}})
	l.Write(Record{Time: time.Unix(0, 0).UTC(), Event: "approve", Session: "s", Scope: "once"})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log = %q", buf.String())
	}
	var got struct {
		By    string              `json:"by"`
		Grant *session.GrantScope `json:"grant"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatal(err)
	}
	if got.By != "alice" || got.Grant == nil || *got.Grant != (session.GrantScope{Kind: "group", Name: "ops"}) {
		t.Errorf("approve record = %s", lines[0])
	}
	if strings.Contains(lines[1], `"by"`) || strings.Contains(lines[1], `"grant"`) {
		t.Errorf("a record with neither writes them: %s", lines[1])
	}
}
