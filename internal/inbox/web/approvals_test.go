package web

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/session"
)

const writeFile = `{"name":"write_file","description":"Write a file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}},"annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":false}}`

func grantsOf(t *testing.T, file string) []session.Grant {
	t.Helper()
	p, _ := session.OpenPersistent(file)
	g, err := p.List()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestStandingApprovalsAreListedAndRevoked(t *testing.T) {
	file := filepath.Join(t.TempDir(), "approvals.json")
	p, _ := session.OpenPersistent(file)
	keep := session.ApprovalKey{App: "fs", Server: "fs", Tool: "read_file", Hash: strings.Repeat("a", 64)}
	drop := session.ApprovalKey{App: "fs", Server: "fs", Tool: "write_file", Hash: strings.Repeat("b", 64)}
	p.Add(keep, time.Now())
	p.Add(drop, time.Now())
	s := newTestSite(t, Defaults().WithApprovals(p))

	_, body, _ := s.do(t, req{path: "/api/approvals"})
	var list struct {
		File   string          `json:"file"`
		Grants []session.Grant `json:"grants"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || list.File != file || len(list.Grants) != 2 {
		t.Fatalf("approvals: %s", body)
	}
	key, _ := json.Marshal(drop)
	tests := []struct {
		name, body string
		want       int
	}{
		{"a key without its hash", `{"server":"fs","tool":"write_file"}`, http.StatusBadRequest},
		{"a key with unknown fields", `{"server":"fs","tool":"write_file","definition_hash":"` + drop.Hash + `","x":1}`, http.StatusBadRequest},
		{"a key that matches nothing", `{"app":"other","server":"fs","tool":"write_file","definition_hash":"` + drop.Hash + `"}`, http.StatusNotFound},
		{"the approval's whole key", string(key), http.StatusOK},
		{"the same key again", string(key), http.StatusNotFound},
	}
	for _, tt := range tests {
		if code, body, _ := s.do(t, req{path: "/api/approvals/revoke", body: tt.body}); code != tt.want {
			t.Errorf("%s: %d %s; want %d", tt.name, code, body, tt.want)
		}
	}
	if g := grantsOf(t, file); len(g) != 1 || g[0].ApprovalKey != keep {
		t.Errorf("left in the file: %+v; want only %+v", g, keep)
	}
}

func TestApprovalsWithoutAFileOrWithABrokenOne(t *testing.T) {
	s := newTestSite(t, Defaults())
	if _, body, _ := s.do(t, req{path: "/api/approvals"}); !strings.Contains(body, `"grants":[]`) {
		t.Errorf("no file: %s", body)
	}
	if code, _, _ := s.do(t, req{path: "/api/approvals/revoke", body: `{}`}); code != http.StatusNotFound {
		t.Errorf("revoke with no file: %d", code)
	}
	file := filepath.Join(t.TempDir(), "approvals.json")
	writeBytes(t, file, "{not json")
	p, _ := session.OpenPersistent(file)
	p.SetLogger(discard())
	s = newTestSite(t, Defaults().WithApprovals(p))
	if _, body, _ := s.do(t, req{path: "/api/approvals"}); !strings.Contains(body, `"error"`) || !strings.Contains(body, "grants nothing") {
		t.Errorf("broken file: %s", body)
	}
}

// A revoke from the page stops the very next call of a running host: the
// host looks at the file before every decision.
func TestARevokeFromThePageIsSeenByTheNextDecision(t *testing.T) {
	file := filepath.Join(t.TempDir(), "approvals.json")
	cfg, err := config.LoadBytes("test.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(context.Background(), cfg, host.Defaults().WithApprovalsFile(file))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	tl, err := host.ParseTool([]byte(writeFile))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	call := host.Call{Session: "s", Server: "fs", Tool: tl}
	d := h.Check(ctx, call)
	if d.Decision != host.Ask {
		t.Fatalf("first call: %s", d.Decision)
	}
	if err := h.Approve("s", &d, host.Always); err != nil {
		t.Fatal(err)
	}
	if d := h.Check(ctx, call); d.Decision != host.Allow {
		t.Fatalf("after always: %s", d.Decision)
	}

	p, _ := session.OpenPersistent(file)
	s := newTestSite(t, Defaults().WithApprovals(p))
	g := grantsOf(t, file)
	if len(g) != 1 {
		t.Fatalf("grants %+v", g)
	}
	key, _ := json.Marshal(g[0].ApprovalKey)
	if code, body, _ := s.do(t, req{path: "/api/approvals/revoke", body: string(key)}); code != http.StatusOK {
		t.Fatalf("revoke: %d %s", code, body)
	}
	if d := h.Check(ctx, call); d.Decision != host.Ask {
		t.Errorf("the call after the revoke: %s; want ask", d.Decision)
	}
}
