package main

import (
	"bytes"
	"strings"
	"testing"
)

// runCLI runs one command in-process, as toolwarden does after handing it
// over, and returns its exit status, stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(&env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, args)
	return code, out.String(), errb.String()
}

// Run by hand, toolwarden-mcp names its commands and points at toolwarden.
func TestRunByItselfItPointsAtToolwarden(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"no command is bad usage", nil, exitUsage},
		{"an unknown command is bad usage", []string{"hook"}, exitUsage},
		{"help is not an error", []string{"--help"}, exitOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", c.args...)
			out := stderr
			if c.code == exitOK {
				out = stdout
			}
			if code != c.code || !strings.Contains(out, "run it as toolwarden <command>") || !strings.Contains(out, "toolwarden wrap ") {
				t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
		})
	}
}
