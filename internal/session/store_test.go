package session_test

import (
	"strconv"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/internal/session"
)

// Sessions looked up and created from many goroutines at once stay one per
// ID, an unknown ID is absent until Get creates it, and an ended session's
// ID starts afresh (nothing of the old session carries over).
func TestStoreLookupGetAndEndUnderConcurrency(t *testing.T) {
	t.Parallel()
	st := session.NewStore(nil)
	if _, ok := st.Lookup("nobody"); ok {
		t.Fatal("an unknown id was found")
	}
	var wg sync.WaitGroup
	got := make([][]*session.Session, 8)
	for g := range got {
		wg.Go(func() {
			for i := range 50 {
				got[g] = append(got[g], st.Get("id"+strconv.Itoa(i)))
			}
		})
	}
	wg.Wait()
	for g := range got {
		for i, s := range got[g] {
			if s != got[0][i] || s.ID() != "id"+strconv.Itoa(i) {
				t.Fatalf("goroutine %d, id%d: another session than goroutine 0's", g, i)
			}
			if l, ok := st.Lookup(s.ID()); !ok || l != s {
				t.Fatalf("Lookup(%s) does not find the session Get made", s.ID())
			}
		}
	}
	old := st.Get("id0")
	old.AddLabels("tainted")
	st.End("id0")
	if _, ok := st.Lookup("id0"); ok {
		t.Fatal("an ended session is still found")
	}
	if fresh := st.Get("id0"); fresh == old || fresh.HasLabel("tainted") {
		t.Fatal("an ended session's id got the old session back")
	}
}
