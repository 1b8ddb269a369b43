package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// runCLI runs toolwarden in-process and returns its exit code and output.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(&env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, args)
	return code, out.String(), errb.String()
}

func decisions(t *testing.T, out string) []map[string]any {
	t.Helper()
	var ds []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var d map[string]any
		if err := json.Unmarshal([]byte(line), &d); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		ds = append(ds, d)
	}
	return ds
}

func TestCheckExitCodesFollowTheStrictestDecision(t *testing.T) {
	t.Parallel()
	ex := "../../examples/calls/"
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"a read-only call is allowed", []string{ex + "fs-read-file.json"}, exitOK},
		{"a destructive write is asked", []string{ex + "fs-write-file.json"}, exitAsk},
		{"ask and allow together exit as ask", []string{ex + "fs-read-file.json", ex + "fs-write-file.json"}, exitAsk},
		{"a hidden tool is denied", []string{"--config", "testdata/no-destructive.toml", ex + "fs-write-file.json", ex + "fs-read-file.json"}, exitDeny},
		{"a missing file is bad input", []string{"testdata/does-not-exist.json"}, exitError},
		{"a bad config is an error", []string{"--config", "testdata/bad.toml", ex + "fs-read-file.json"}, exitError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runCLI(t, "", append([]string{"check"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, c.code, stderr)
			}
		})
	}
}

func TestCheckRejectsMalformedCalls(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"not JSON":             `{"server":`,
		"no server":            `{"tool":{"name":"x"}}`,
		"no tool":              `{"server":"fs"}`,
		"a tool without name":  `{"server":"fs","tool":{"description":"x"}}`,
		"arguments not object": `{"server":"fs","tool":{"name":"x"},"arguments":[1]}`,
		"nothing at all":       ``,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, out, stderr := runCLI(t, in, "check")
			if code != exitError || out != "" || !strings.HasPrefix(stderr, "toolwarden check: <stdin>:1:") {
				t.Fatalf("exit %d out %q stderr %q", code, out, stderr)
			}
		})
	}
}

func TestCheckSharesOneSessionAcrossCalls(t *testing.T) {
	t.Parallel()
	call, err := os.ReadFile("../../examples/calls/fs-write-file.json")
	if err != nil {
		t.Fatal(err)
	}
	stdin := string(call) + string(call)
	_, out, _ := runCLI(t, stdin, "check")
	ds := decisions(t, out)
	if len(ds) != 2 || ds[0]["decision"] != "ask" || ds[1]["decision"] != "ask" {
		t.Fatalf("without approval: %v", out)
	}
	_, out, _ = runCLI(t, stdin, "check", "--approve-session")
	ds = decisions(t, out)
	if ds[0]["decision"] != "ask" || ds[1]["decision"] != "allow" {
		t.Fatalf("with --approve-session: %s / %s", ds[0]["decision"], ds[1]["decision"])
	}
	if r := ds[1]["reasons"].([]any)[0].(map[string]any); r["code"] != "remembered" {
		t.Fatalf("second reason %v", r)
	}
}

func TestCheckApproveAlwaysWritesTheApprovalsFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "approvals.json")
	ex := "../../examples/calls/fs-write-file.json"
	if code, _, stderr := runCLI(t, "", "check", "--approve=always", "--approvals", file, ex); code != exitAsk {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, out, _ := runCLI(t, "", "check", "--approvals", file, "--session", "another", ex)
	if code != exitOK || decisions(t, out)[0]["decision"] != "allow" {
		t.Fatalf("always approval not honoured in a new process: %d %s", code, out)
	}
}

func TestExplainGolden(t *testing.T) {
	t.Parallel()
	calls, _ := filepath.Glob("../../examples/calls/*.json")
	code, out, stderr := runCLI(t, "", append([]string{"explain", "--config", "../../examples/config/config.toml", "--cwd", "/home/me/src", "--home", "/home/me"}, calls...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Plugin timings vary from run to run.
	out = regexp.MustCompile(`\(\d+(\.\d+)?(ns|µs|ms|s)\)`).ReplaceAllString(out, "(TIME)")
	golden := "testdata/explain-example.golden"
	checkGolden(t, golden, out)
}
