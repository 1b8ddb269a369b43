package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/inbox"
)

func TestInboxRefusesAnAddressOtherMachinesReach(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.168.1.10:8080", "localhost:0", "example.com:80"} {
		t.Run(addr, func(t *testing.T) {
			var out, errb strings.Builder
			code := run(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, []string{"inbox", "--open=false", "--addr", addr})
			if code != exitUsage || !strings.Contains(errb.String(), "loopback") {
				t.Errorf("exit %d, stderr %q; want exit 2 naming loopback", code, errb.String())
			}
		})
	}
}

func TestInboxHelp(t *testing.T) {
	var out, errb strings.Builder
	code := run(&env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}, []string{"inbox", "--help"})
	if code != exitOK || !strings.Contains(out.String(), "--addr") || !strings.Contains(out.String(), "loopback") {
		t.Errorf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
}

func TestInboxReportsAnUnsafeRendezvousDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rv")
	os.Mkdir(dir, 0o755)
	os.Chmod(dir, 0o755)
	t.Setenv(inbox.EnvRuntimeDir, dir)
	var out, errb strings.Builder
	code := serveInbox(context.Background(), &env{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }},
		[]string{"--open=false", "--approvals", filepath.Join(t.TempDir(), "a.json")})
	if code != exitError || !strings.Contains(errb.String(), "chmod 700") {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// The inbox announces itself while it runs, serves the page to the token
// it prints and to nobody else, and withdraws the announcement on exit.
func TestInboxServesAnnouncesAndCleansUp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rv")
	t.Setenv(inbox.EnvRuntimeDir, dir)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfg, []byte("approval_channel = \"both\"\n[mcp_servers.fs]\ncommand = \"x\"\n"), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan int)
	go func() {
		var errb strings.Builder
		done <- serveInbox(ctx, &env{stdout: pw, stderr: &errb, getenv: func(string) string { return "" }},
			[]string{"--open=false", "--config", cfg, "--approvals", filepath.Join(t.TempDir(), "a.json")})
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatal("no output")
	}
	url, ok := strings.CutPrefix(lines.Text(), "toolwarden inbox: ")
	if !ok || !strings.Contains(url, "/?t=") {
		t.Fatalf("first line %q; want the URL with its token", lines.Text())
	}
	go io.Copy(io.Discard, pr)
	info, err := inbox.Running(dir)
	if err != nil || !strings.HasPrefix(url, info.URL+"/?t=") || info.PID != os.Getpid() {
		t.Fatalf("Running = %+v, %v; want %s", info, err, url)
	}
	base := info.URL
	if resp, err := http.Get(base + "/api/asks"); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("the API without the token: %v %v", resp, err)
	}
	jar, _ := cookiejar.New(nil)
	resp, err := (&http.Client{Jar: jar}).Get(url) // follows the redirect with the cookie
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the page with the token: %v %v", resp, err)
	}
	resp.Body.Close()

	cancel()
	if code := <-done; code != exitOK {
		t.Errorf("exit %d", code)
	}
	if _, err := inbox.Running(dir); !errors.Is(err, inbox.ErrNoInbox) {
		t.Errorf("inbox.json outlived the inbox: %v", err)
	}
}

func TestInboxSaysWhichServersSendAsksToIt(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"no channel set", "[mcp_servers.fs]\ncommand = \"x\"\n", "No server of"},
		{"one server routed here", "[mcp_servers.fs]\ncommand = \"x\"\napproval_channel = \"inbox\"\n[mcp_servers.git]\ncommand = \"y\"\n", "Asks from fs reach this inbox"},
		{"the top level routes everything", "approval_channel = \"both\"\n", "Asks reach this inbox by approval_channel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "config.toml")
			os.WriteFile(f, []byte(tt.toml), 0o600)
			cfg, err := loadConfig(&env{getenv: func(string) string { return "" }}, []string{f}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := inboxConfigNote(cfg); !strings.Contains(got, tt.want) {
				t.Errorf("note %q; want it to say %q", got, tt.want)
			}
		})
	}
}
