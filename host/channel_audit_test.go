package host_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

func TestRecordAskWritesWhichChannelAnsweredToTheAuditLog(t *testing.T) {
	t.Parallel()
	var log bytes.Buffer
	h, err := host.New(context.Background(), config.Default(), host.Defaults().WithAuditLog(&log))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(context.Background())
	h.RecordAsk("s1", host.AskRecord{Ask: "abc", Server: "fs", Tool: "write_file", App: "fs", Channel: "inbox", Outcome: "answered", Option: "allow_once", By: "webhook-link"})
	want := `"event":"channel","session":"s1","decision":{"ask":"abc","server":"fs","tool":"write_file","app":"fs","channel":"inbox","outcome":"answered","option":"allow_once","by":"webhook-link"}`
	if !strings.Contains(log.String(), want) {
		t.Errorf("audit log %s\nwant %s", log.String(), want)
	}
	quiet, err := host.New(context.Background(), config.Default(), host.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	defer quiet.Close(context.Background())
	quiet.RecordAsk("s1", host.AskRecord{Channel: "inbox"}) // no audit log: nothing to do, no panic
}
