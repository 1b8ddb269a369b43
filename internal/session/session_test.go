package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/session"
)

func TestPinDetectsDriftAndDropsApprovalsForThatToolOnly(t *testing.T) {
	t.Parallel()
	s := session.NewStore(nil).Get("s")
	if s.Pin("fs", "write", "h1") {
		t.Fatal("first sight reported as drift")
	}
	s.Remember(session.ApprovalKey{App: "fs", Server: "fs", Tool: "write", Hash: "h1"})
	s.Remember(session.ApprovalKey{App: "fs", Server: "fs", Tool: "read", Hash: "r1"})
	if !s.Remembered("fs", "fs", "", "write", "h1") {
		t.Fatal("approval not remembered")
	}
	if !s.Pin("fs", "write", "h2") {
		t.Fatal("changed hash not reported as drift")
	}
	if s.Remembered("fs", "fs", "", "write", "h1") {
		t.Error("drift kept the approval")
	}
	if !s.Remembered("fs", "fs", "", "read", "r1") {
		t.Error("drift of one tool dropped another tool's approval")
	}
	if !s.Pin("fs", "write", "h2") {
		t.Error("drift must persist until the new definition is approved")
	}
	s.Repin("fs", "write", "h2")
	if s.Pin("fs", "write", "h2") {
		t.Error("repinned definition still reported as drift")
	}
	if h, _ := s.Pinned("fs", "write"); h != "h2" {
		t.Errorf("pinned %q", h)
	}
}

func TestLabelsAreOrderedDeduplicatedAndShared(t *testing.T) {
	t.Parallel()
	s := session.NewStore(nil).Get("s")
	if got := s.AddLabels("a", "b", "a", ""); len(got) != 2 {
		t.Fatalf("added %v", got)
	}
	before := s.Labels()
	if got := s.AddLabels("b", "c"); len(got) != 1 || got[0] != "c" {
		t.Fatalf("added %v", got)
	}
	if len(before) != 2 {
		t.Fatalf("a snapshot changed after AddLabels: %v", before)
	}
	if l := s.Labels(); len(l) != 3 || l[2] != "c" || !s.HasLabel("a") || s.HasLabel("z") {
		t.Fatalf("labels %v", l)
	}
}

func TestStoreHandsOutOneSessionPerID(t *testing.T) {
	t.Parallel()
	st := session.NewStore(nil)
	var wg sync.WaitGroup
	got := make([]*session.Session, 16)
	for i := range got {
		wg.Add(1)
		go func(i int) { defer wg.Done(); got[i] = st.Get("x") }(i)
	}
	wg.Wait()
	for _, s := range got {
		if s != got[0] {
			t.Fatal("two sessions for one id")
		}
	}
	st.End("x")
	if _, ok := st.Lookup("x"); ok {
		t.Fatal("ended session still there")
	}
}

func TestPersistentApprovalsSurviveReopenAndRevoke(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "approvals.json")
	p, err := session.OpenPersistent(path)
	if err != nil {
		t.Fatal(err)
	}
	h1, h2 := strings.Repeat("1", 64), strings.Repeat("2", 64)
	k := session.ApprovalKey{App: "fs", Server: "fs", Tool: "write", Hash: h1}
	if err := p.Add(k, time.Unix(1700000000, 0)); err != nil {
		t.Fatal(err)
	}
	q, err := session.OpenPersistent(path)
	if err != nil {
		t.Fatal(err)
	}
	if !q.Remembered("fs", "fs", "", "write", h1) || q.Remembered("fs", "fs", "", "write", h2) {
		t.Fatal("reopened file does not hold exactly the grant")
	}
	// A session store with the file honours it.
	if !session.NewStore(q).Get("new").Remembered("fs", "fs", "", "write", h1) {
		t.Fatal("session ignores the always file")
	}
	// Another process revokes; the first notices without reopening, at once.
	n, err := q.Revoke(func(g session.Grant) bool { return g.Tool == "write" })
	if err != nil || n != 1 {
		t.Fatalf("revoke %d %v", n, err)
	}
	if p.Remembered("fs", "fs", "", "write", h1) {
		t.Fatal("revocation by another handle not seen by the next call")
	}
}

// A grant that could not be read back is never written.
func TestPersistentRefusesToStoreAGrantItWouldNotRead(t *testing.T) {
	t.Parallel()
	p, _ := session.OpenPersistent(filepath.Join(t.TempDir(), "approvals.json"))
	for _, k := range []session.ApprovalKey{
		{App: "fs", Server: "fs", Tool: "write", Hash: "h1"},
		{App: "fs", Server: "", Tool: "write", Hash: strings.Repeat("1", 64)},
	} {
		if err := p.Add(k, time.Now()); err == nil {
			t.Errorf("Add(%+v) accepted", k)
		}
	}
	if _, err := os.Stat(p.Path()); err == nil {
		t.Fatal("a refused grant created the file")
	}
}

// A corrupt file does not stop the host from starting: it grants nothing
// and says why, naming the file.
func TestPersistentReportsACorruptFileWithAClearError(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "approvals.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := session.OpenPersistent(path)
	if err != nil {
		t.Fatalf("open refused: %v", err)
	}
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "toolwarden approvals reset") {
		t.Fatalf("error %v", err)
	}
}
