package upstream

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// A start that fails says why at once. The startup timeout is an hour in
// these tests: a start that waited for it instead would hang the test.
const hour = time.Hour

func TestStartFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		spec     serverspec.Spec
		check    func(t *testing.T, err error)
		wantAll  []string
		wantNone []string
	}{
		{
			name: "a command that is not installed fails at once, naming the command and PATH",
			spec: serverspec.Spec{Command: "toolwarden-no-such-command"},
			check: func(t *testing.T, err error) {
				var nf *NotFoundError
				if !errors.As(err, &nf) || nf.Command != "toolwarden-no-such-command" {
					t.Errorf("want a NotFoundError, got %T %v", err, err)
				}
			},
			wantAll: []string{`"toolwarden-no-such-command"`, "not found in PATH", os.Getenv("PATH")},
		},
		{
			name: "a server that exits before the handshake reports its status and the end of its stderr",
			spec: serverspec.Spec{Command: "sh", Args: []string{"-c", "echo 'npm ERR! code E404' >&2; echo 'npm ERR! 404 Not Found - GET https://registry.npmjs.org/@x%2fserver-filesystm' >&2; exit 3", "--api-key=s3cret"}},
			check: func(t *testing.T, err error) {
				var ex *ExitedError
				if !errors.As(err, &ex) || ex.Status != "exit status 3" {
					t.Errorf("want an ExitedError with exit status 3, got %T %v", err, err)
				}
			},
			wantAll: []string{"exit status 3", "npm ERR! 404 Not Found", "npm ERR! code E404", "before completing the MCP handshake", "sh exited"},
			// The error reaches the agent; arguments may hold secrets.
			wantNone: []string{"s3cret"},
		},
		{
			name: "a server that exits at once with status 0 and says nothing is reported too",
			spec: serverspec.Spec{Command: "true"},
			check: func(t *testing.T, err error) {
				var ex *ExitedError
				if !errors.As(err, &ex) {
					t.Errorf("want an ExitedError, got %T %v", err, err)
				}
			},
			wantAll: []string{"exit status 0", "nothing to stderr"},
		},
		{
			name: "a server killed by a signal before the handshake reports the signal",
			spec: serverspec.Spec{Command: "sh", Args: []string{"-c", "echo dying >&2; kill -9 $$"}},
			check: func(t *testing.T, err error) {
				var ex *ExitedError
				if !errors.As(err, &ex) {
					t.Errorf("want an ExitedError, got %T %v", err, err)
				}
			},
			wantAll: []string{"signal: killed", "dying"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sp := tt.spec
			sp.Name, sp.StartupTimeout = "broken", hour
			c := New(sp, "test", nil)
			defer c.Close()
			err := c.Start(context.Background())
			if err == nil {
				t.Fatal("Start succeeded")
			}
			tt.check(t, err)
			for _, w := range tt.wantAll {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, w := range tt.wantNone {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %q contains %q", err, w)
				}
			}
			if c.Err() == nil || !strings.Contains(c.Err().Error(), tt.wantAll[0]) {
				t.Errorf("Err() = %v, want the cause", c.Err())
			}
		})
	}
}

func TestStartOfASlowServerThatWritesToStderrSucceeds(t *testing.T) {
	t.Parallel()
	c := New(serverspec.Spec{
		Name:    "slow",
		Command: "sh",
		Args:    []string{"-c", `echo "installing packages..." >&2; sleep 1; exec "$0"`, os.Args[0]},
		Env:     append(os.Environ(), "TW_FAKE_SERVER=1"),
		// Long enough for the sleep on a loaded machine.
		StartupTimeout: time.Minute,
	}, "test", nil)
	defer c.Close()
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("a slow but healthy server did not start: %v", err)
	}
	if len(c.Tools()) != 1 {
		t.Errorf("tools = %d, want 1", len(c.Tools()))
	}
	if got := callText(t, c, "echo", `{"message":"hi"}`); got != "hi" {
		t.Errorf("echo = %q", got)
	}
}

func TestStderrTailKeepsTheLastLines(t *testing.T) {
	t.Parallel()
	var tl stderrTail
	for i := range 100 {
		_, _ = tl.Write([]byte(strings.Repeat("x", i) + "\n"))
	}
	_, _ = tl.Write([]byte("last words"))
	got := tl.String()
	parts := strings.Split(got, " | ")
	if len(parts) != tailLines || parts[len(parts)-1] != "last words" {
		t.Errorf("tail = %q", got)
	}
	if len(got) > tailBytes+4*len(" | ") {
		t.Errorf("tail is %d bytes", len(got))
	}
}
