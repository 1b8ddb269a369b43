package host

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolwarden/toolwarden/internal/session"
	"github.com/toolwarden/toolwarden/internal/store"
)

// A hook process restores its session from its file, then meets the
// store: a plugin state the store holds is the store's (the file is no
// newer: a budget counted up through another process must not fall back),
// and one only the file holds is kept and saved with the next change.
func TestAFirstLoadLetsTheStoreWinOverAStateRestoredFromElsewhere(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	budget := func(n int64) session.PluginState { return session.PluginState{Counters: map[string]int64{"calls": n}} }
	if _, _, err := st.SaveSession(ctx, session.State{Version: 1, ID: "s", Plugins: map[string]session.PluginState{"budget": budget(2)}}); err != nil {
		t.Fatal(err)
	}
	s := session.NewStore(nil).Get("s")
	s.Restore(session.State{Version: 1, ID: "s", Plugins: map[string]session.PluginState{"budget": budget(1), "fileonly": budget(5)}})
	var sh sharing
	sh.init(st, nil)
	if err := sh.load(ctx, s); err != nil {
		t.Fatal(err)
	}
	if got := s.Plugin("budget").State().Counters["calls"]; got != 2 {
		t.Errorf("budget after the first load = %d, want the store's 2", got)
	}
	if got := s.Plugin("fileonly").State().Counters["calls"]; got != 5 {
		t.Errorf("a state only the file held = %d, want 5 kept", got)
	}
	s.AddLabels("x")
	if err := sh.save(ctx, s); err != nil {
		t.Fatal(err)
	}
	stored, _, _, err := st.LoadSession(ctx, "s", 0)
	if err != nil || stored.Plugins["budget"].Counters["calls"] != 2 || stored.Plugins["fileonly"].Counters["calls"] != 5 {
		t.Fatalf("stored after the next save: %+v %v", stored.Plugins, err)
	}
}
