package e2e

import (
	"strings"
	"testing"
)

// An admin's requirements hold against the user's config through the real
// binary: wrap --requirements in front of the real server-filesystem, with
// the official TypeScript client. A tool the user config enables but the
// requirements disable is not listed, and a call to it anyway is denied
// saying which requirement decided.
func TestRequirementsDisableAToolTheUserEnables(t *testing.T) {
	t.Parallel()
	fsBin := npmServer(t, "mcp-server-filesystem")
	dir, file, secret := secretDir(t)
	user := writeFile(t, "user.toml", "[apps.fs.tools.read_text_file]\nenabled = true\n")
	reqs := writeFile(t, "requirements.toml", "# admin\n[apps.fs.tools.read_text_file]\nenabled = false\n")
	args := wrapArgs(t, "fs", []string{user}, fsBin, dir)
	args = append([]string{args[0], "--requirements", reqs}, args[1:]...)

	res := runTS(t, true, []string{"allow_once"}, []tsStep{
		{Op: "list"},
		{Op: "call", Name: "read_text_file", Arguments: map[string]any{"path": file}},
		{Op: "call", Name: "list_directory", Arguments: map[string]any{"path": dir}},
	}, twBin, args...)
	r := res.Results
	if len(r) != 3 {
		t.Fatalf("results: %+v", r)
	}
	if contains(r[0].Tools, "read_text_file") || !contains(r[0].Tools, "list_directory") {
		t.Fatalf("tools/list: %v, want list_directory and no read_text_file", r[0].Tools)
	}
	wantRefused(t, "read_text_file, disabled by requirements", r[1].IsError, r[1].Text+r[1].Thrown, "required by "+reqs+":3:1", secret)
	if r[2].IsError || !strings.Contains(r[2].Text, "secret.txt") {
		t.Errorf("a tool the requirements leave alone: %+v", r[2])
	}
	if len(res.Asked) != 0 {
		t.Errorf("a tool the requirements disable was put to the human: %+v", res.Asked)
	}
}
