package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The official TypeScript client, calling with a 12 s timeout that it
// resets on progress, keeps waiting for an answer given in the inbox after
// 25 s: wrap's progress notifications for the call's token keep it alive.
func TestATypeScriptClientThatResetsItsTimeoutOnProgressWaitsForTheInbox(t *testing.T) {
	t.Parallel()
	s := newChannelSetup(t, "approval_channel = \"inbox\"\n")
	step := map[string]any{"op": "call", "name": "write_file",
		"arguments": s.write("kept.txt", "kept").Arguments,
		"timeout":   12000, "resetTimeoutOnProgress": true}
	script := s.script(t, false, nil, nil)
	script["steps"] = []map[string]any{step}
	run := startTS(t, script)
	asks := s.asks(t, 1)
	time.Sleep(25 * time.Second) // twice the client's timeout
	respond(t, s.rv, asks[0].ID, "allow_once")
	run.wait(t)
	var out struct {
		Results []struct {
			IsError  bool   `json:"isError"`
			Text     string `json:"text"`
			Thrown   string `json:"thrown"`
			Progress int    `json:"progress"`
		} `json:"results"`
	}
	if err := json.Unmarshal(run.out.Bytes(), &out); err != nil || len(out.Results) != 1 {
		t.Fatalf("tsclient output %s: %v", run.out.String(), err)
	}
	r := out.Results[0]
	if r.Thrown != "" || r.IsError || !s.exists("kept.txt") {
		t.Fatalf("the call did not wait for the answer: %+v (stderr %s)", r, run.errb.String())
	}
	if r.Progress < 2 {
		t.Errorf("the client saw %d progress notifications in 25 s, want at least 2", r.Progress)
	}
	if strings.Contains(r.Text, "timed out") {
		t.Errorf("result: %q", r.Text)
	}
}
