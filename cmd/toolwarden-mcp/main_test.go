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
