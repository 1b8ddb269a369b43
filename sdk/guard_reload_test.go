package sdk_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/testkit/testhost"
	"github.com/toolwarden/toolwarden/sdk"
)

func TestReloadKeepsApprovalsLabelsAndPinsAndAppliesToTheNextCall(t *testing.T) {
	t.Parallel()
	f := newFiles()
	a := &recorder{answer: sdk.AllowSession}
	h := testhost.New(t, "", host.Defaults().WithPlugin(labeler{}))
	g := sdk.New(h, sdk.WithApprover(a))
	fs := g.Session("s").Client("fs", f.connect(t))
	call(t, fs, "write_file", writeArgs)

	if err := g.Reload(context.Background(), testhost.Config(t, "[apps.fs.tools.read_file]\nenabled = false\n")); err != nil {
		t.Fatal(err)
	}
	if g.Host() != h {
		t.Fatal("Reload replaced the host")
	}
	call(t, fs, "write_file", writeArgs)
	if n := len(a.asked()); n != 1 {
		t.Errorf("asked %d times: the session approval did not survive the reload", n)
	}
	if !h.Session("s").HasLabel("ran_write_file") {
		t.Errorf("labels after reload %v", h.Session("s").Labels())
	}
	if _, ok := h.Session("s").Pinned("fs", "write_file"); !ok {
		t.Error("the pin did not survive the reload")
	}
	if out, isErr := call(t, fs, "read_file", map[string]any{"path": "/notes.txt"}); !isErr {
		t.Errorf("read_file ran after the reload hid it: %q", out)
	}
}

func TestReloadRefusesAPluginThatDoesNotLoadAndTheOldConfigKeepsDeciding(t *testing.T) {
	t.Parallel()
	f := newFiles()
	g := sdk.New(testhost.New(t, "[apps.fs.tools.read_file]\nenabled = false\n", host.Defaults()))
	fs := g.Session("s").Client("fs", f.connect(t))
	err := g.Reload(context.Background(), testhost.Config(t, "[policies.mine]\nwasm = \"/nowhere/mine.wasm\"\n"))
	if err == nil || !strings.Contains(err.Error(), "policies.mine") {
		t.Fatalf("Reload = %v, want an error naming policies.mine", err)
	}
	if out, isErr := call(t, fs, "read_file", map[string]any{"path": "/notes.txt"}); !isErr {
		t.Errorf("read_file ran: the refused config replaced the one that hides it (%q)", out)
	}
}

// Under -race: conversations call while the config is reloaded and the
// host swapped; every conversation keeps what it earned.
func TestReloadAndSwapWhileConversationsCallIsSafe(t *testing.T) {
	t.Parallel()
	f := newFiles()
	c := f.connect(t)
	g := sdk.New(testhost.New(t, "", host.Defaults().WithPlugin(labeler{})), sdk.WithApprover(sdk.Fixed(sdk.AllowSession)))
	other := testhost.New(t, "", host.Defaults().WithPlugin(labeler{}))
	configs := []*config.Config{testhost.Config(t, "[apps.other]\nenabled = false\n"), testhost.Config(t, "")}
	var wg sync.WaitGroup
	for i := range 4 {
		conv := g.Session(fmt.Sprintf("conv-%d", i)).Client("fs", c)
		wg.Go(func() {
			for range 20 {
				call(t, conv, "write_file", writeArgs)
				call(t, conv, "read_file", map[string]any{"path": "/notes.txt"})
			}
		})
	}
	wg.Go(func() {
		for i := range 10 {
			if err := g.Reload(context.Background(), configs[i%2]); err != nil {
				t.Error(err)
			}
		}
	})
	g.Swap(other)
	wg.Wait()
	h := g.Host()
	for i := range 4 {
		s := h.Session(fmt.Sprintf("conv-%d", i))
		if !s.HasLabel("ran_write_file") || !s.HasLabel("ran_read_file") || len(s.Approvals()) != 1 {
			t.Errorf("conv-%d after the reloads: labels %v, approvals %v", i, s.Labels(), s.Approvals())
		}
	}
}
