package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeCall writes a call to the filesystem server's write_file with path
// as its argument and returns the file.
func writeCall(t *testing.T, dir, name, path string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	writeTestFile(t, p, `{"server":"fs","tool":{"name":"write_file","annotations":{"readOnlyHint":false,"destructiveHint":true,"openWorldHint":false}},"arguments":{"path":`+quoteJSON(path)+`,"content":"x"}}`)
	return p
}

// Trap 2 of issue #23: with the config init writes, explain decides a
// call file that has no server context as the running proxy would (the
// user's own home and directory), so a write to /tmp/x.txt is asked, not
// denied as a write under ~/.ssh; a write under the real ~/.ssh still is;
// and where a path cannot be resolved, the trace says which and why.
func TestExplainWithInitsConfigJudgesPathsAgainstTheUsersOwnHome(t *testing.T) {
	t.Parallel()
	n := newNewcomer(t)
	n.init()
	calls := t.TempDir()
	for _, c := range []struct {
		name, path string
		flags      []string
		want       []string
		not        string
	}{
		{"a write to /tmp is asked, not denied as a write under ~/.ssh", "/tmp/x.txt", nil,
			[]string{"  paths      cwd=" + n.project + " home=" + n.home + " (yours, as for a server you start here)\n", "  => ASK"},
			"writes under ~/.ssh are denied"},
		{"a write under the user's ~/.ssh is denied", filepath.Join(n.home, ".ssh", "authorized_keys"), nil,
			[]string{"  => DENY\n", "writes under ~/.ssh are denied"}, "unresolved"},
		{"another user's home cannot be resolved, and the trace says why", "~bob/.ssh/authorized_keys", nil,
			[]string{`path             unresolved    [/path]`, `"~bob/.ssh/authorized_keys" cannot be resolved: another user's home directory is not resolved; a deny or ask path rule matches what it cannot resolve (fails closed)`, "  => DENY\n"}, ""},
		{"a home given as unknown fails closed on ~, and the trace says how to give it", "~/notes.txt", []string{"--home", ""},
			[]string{`"~/notes.txt" cannot be resolved: the server's home directory is unknown (give it with --home, or "home" in the call's "server_context")`, "home=unknown", "then --home", "  => DENY\n"}, ""},
		{"--home moves ~", "/srv/other/.ssh/k", []string{"--home", "/srv/other"},
			[]string{"home=/srv/other", "  => DENY\n", "writes under ~/.ssh are denied"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := writeCall(t, calls, strings.ReplaceAll(c.name, " ", "-")+".json", c.path)
			args := append(append([]string{"explain", "--config", n.userConfig()}, c.flags...), file)
			r := runBinIn(t, n.env, n.project, built.tw, args...)
			for _, w := range c.want {
				if r.code != exitOK || !strings.Contains(r.stdout, w) {
					t.Fatalf("explain %s: exit %d, want %q in\n%s%s", c.path, r.code, w, r.stdout, r.stderr)
				}
			}
			if c.not != "" && strings.Contains(r.stdout, c.not) {
				t.Fatalf("explain %s says %q:\n%s", c.path, c.not, r.stdout)
			}
		})
	}
}

// runBinIn is runBin from the folder dir: check and explain take the
// user's working directory as the server's.
func runBinIn(t *testing.T, env []string, dir string, bin string, args ...string) ran {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env, cmd.Dir = env, dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return ran{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

// After init, the README's hook line and explain give the same decision
// for the same call: explain is a faithful preview of the protected
// session, paths under ~, relative and unresolvable ones included.
func TestAfterInitExplainPreviewsTheHooksDecisionForEveryPath(t *testing.T) {
	t.Parallel()
	n := newNewcomer(t)
	n.init()
	hookLine := readmeHookCommand(t)
	calls := t.TempDir()
	for i, path := range []string{
		"/tmp/x.txt", filepath.Join(n.home, ".ssh", "authorized_keys"), "~/.ssh/config", "notes.txt",
		"../.ssh/id_ed25519", "~/notes.txt", "~bob/.ssh/authorized_keys", "/etc/passwd",
	} {
		session := "s" + strconv.Itoa(i)
		ev, _ := json.Marshal(map[string]any{
			"session_id": session, "transcript_path": filepath.Join(n.home, "t.jsonl"), "cwd": n.project,
			"hook_event_name": "PreToolUse", "tool_name": "mcp__fs__write_file",
			"tool_input": map[string]any{"path": path, "content": "x"},
		})
		r := n.run(string(ev), hookLine[1:]...)
		var answer struct {
			Out struct {
				Decision string `json:"permissionDecision"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &answer); err != nil || answer.Out.Decision == "" {
			t.Fatalf("%s: hook answer (exit %d): %v\n%s%s", path, r.code, err, r.stdout, r.stderr)
		}
		file := filepath.Join(calls, session+".json")
		writeTestFile(t, file, `{"session":`+quoteJSON(session)+`,"server":"fs","tool":{"name":"write_file"},"arguments":{"path":`+quoteJSON(path)+`,"content":"x"}}`)
		e := runBinIn(t, n.env, n.project, built.tw, "explain", file)
		if want := "  => " + strings.ToUpper(answer.Out.Decision); e.code != exitOK || !strings.Contains(e.stdout, want) {
			t.Errorf("%s: the hook says %s, explain says\n%s%s", path, answer.Out.Decision, e.stdout, e.stderr)
		}
	}
}
