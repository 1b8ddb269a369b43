package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/proxy"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"github.com/toolwarden/toolwarden/internal/upstream"
)

// A proxy that waits for its one upstream, which cannot start, answers the
// client's requests with the cause and ends its Run once it answered one
// that is not server/discover, with the client's input still open.
func TestWaitingProxyRefusesTheSessionWhenItsUpstreamCannotStart(t *testing.T) {
	t.Parallel()
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	tests := []struct {
		name    string
		send    []string
		answers int // error answers expected before Run returns
	}{
		{"a legacy client's initialize is answered with the cause", []string{initialize}, 1},
		{"a client that probes with server/discover gets the cause twice", []string{`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{}}`, initialize}, 2},
		{"notifications before the initialize are not answered", []string{`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, initialize}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			h, err := host.New(ctx, config.Default(), host.Defaults().WithApprovalsFile(filepath.Join(t.TempDir(), "approvals.json")))
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close(ctx)
			// An hour: a refusal that waited for the startup timeout would
			// hang the test.
			up := serverspec.Spec{Name: "fs", Command: "toolwarden-no-such-command", StartupTimeout: time.Hour}
			p := proxy.New(h, []serverspec.Spec{up}, proxy.Defaults().WithWaitForUpstreams(true))
			inR, inW := io.Pipe()
			defer inW.Close() // only after Run returned: the client never hangs up
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() { done <- p.Run(ctx, inR, outW); outW.Close() }()
			go func() {
				for _, l := range tt.send {
					_, _ = io.WriteString(inW, l+"\n")
				}
			}()
			var answers []string
			sc := bufio.NewScanner(outR)
			for sc.Scan() {
				answers = append(answers, sc.Text())
			}
			err = <-done
			var serr *proxy.StartupError
			if !errors.As(err, &serr) || serr.Server != "fs" {
				t.Fatalf("Run returned %T %v, want a StartupError for fs", err, err)
			}
			var nf *upstream.NotFoundError
			if !errors.As(err, &nf) {
				t.Errorf("the cause is %T, want a NotFoundError", serr.Cause)
			}
			if len(answers) != tt.answers {
				t.Fatalf("answers = %q, want %d", answers, tt.answers)
			}
			for _, a := range answers {
				var m struct {
					Error *struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
						Data    struct {
							Server, Command, Cause string
						} `json:"data"`
					} `json:"error"`
				}
				if json.Unmarshal([]byte(a), &m) != nil || m.Error == nil {
					t.Fatalf("not an error answer: %s", a)
				}
				if !strings.Contains(m.Error.Message, `"toolwarden-no-such-command" was not found in PATH`) || m.Error.Data.Server != "fs" || m.Error.Data.Command != "toolwarden-no-such-command" {
					t.Errorf("answer = %s", a)
				}
			}
		})
	}
}
