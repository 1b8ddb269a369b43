package host_test

import (
	"bytes"
	"context"
	"github.com/toolwarden/toolwarden/internal/audit"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

func TestAuditWritesWhichChannelAnsweredToTheAuditLog(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	h, err := host.New(context.Background(), config.Default(), host.Defaults().WithAuditLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	h.Audit("s1", audit.Ask{Ask: "abc", Server: "fs", Tool: "write_file", App: "fs", Channel: "inbox", Outcome: "answered", Option: "allow_once", By: "webhook-link"})
	want := `"event":"channel","session":"s1","decision":{"ask":"abc","server":"fs","tool":"write_file","app":"fs","channel":"inbox","outcome":"answered","option":"allow_once","by":"webhook-link"}`
	if !strings.Contains(log.String(), want) {
		t.Errorf("audit log %s\nwant %s", log.String(), want)
	}
	quiet, err := host.New(context.Background(), config.Default(), host.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(context.Background())
	quiet.Audit("s1", audit.Ask{Channel: "inbox"}) // no audit log: nothing to do, no panic
}

// A front end's event carries its own name: a relayed request is a "relay"
// record, in the same log and form as the host's own.
func TestAuditWritesARelayedRequestUnderItsOwnEventName(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	h, err := host.New(context.Background(), config.Default(), host.Defaults().WithAuditLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	h.Audit("conv-1", audit.Relay{Server: "docs", Method: "sampling/createMessage", Outcome: "answered"})
	want := `"event":"relay","session":"conv-1","decision":{"server":"docs","method":"sampling/createMessage","outcome":"answered"}`
	if !strings.Contains(log.String(), want) {
		t.Errorf("audit log %s\nwant %s", log.String(), want)
	}
}
