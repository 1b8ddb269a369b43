package inbox

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestAnnounceAndRunning(t *testing.T) {
	dir := testDir(t)
	if _, err := Running(dir); !errors.Is(err, ErrNoInbox) {
		t.Fatalf("Running before Announce = %v", err)
	}
	for _, bad := range []string{"ftp://127.0.0.1:1", "http://127.0.0.1:1/?t=secret", "127.0.0.1:1"} {
		if _, err := Announce(dir, bad); err == nil {
			t.Errorf("Announce(%q) accepted", bad)
		}
	}
	remove, err := Announce(dir, "http://127.0.0.1:4242")
	if err != nil {
		t.Fatal(err)
	}
	info, err := Running(dir)
	if err != nil || info.URL != "http://127.0.0.1:4242" || info.PID != os.Getpid() {
		t.Fatalf("Running = %+v, %v", info, err)
	}
	if err := remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := Running(dir); !errors.Is(err, ErrNoInbox) {
		t.Errorf("Running after remove = %v", err)
	}
}

func TestRunningIgnoresADeadInbox(t *testing.T) {
	dir := testDir(t)
	os.WriteFile(filepath.Join(dir, infoFile), []byte(`{"url":"http://127.0.0.1:1","pid":`+strconv.Itoa(deadPID(t))+`,"started":"2026-01-01T00:00:00Z"}`), 0o600)
	if _, err := Running(dir); !errors.Is(err, ErrNoInbox) {
		t.Errorf("Running = %v; want ErrNoInbox", err)
	}
	os.WriteFile(filepath.Join(dir, infoFile), []byte(`garbage`), 0o600)
	if _, err := Running(dir); err == nil {
		t.Error("Running accepted garbage")
	}
}

func TestAnswerLinksWorkOnceForTheirAskOnly(t *testing.T) {
	dir := testDir(t)
	p := post(t, dir, testAsk())
	other := post(t, dir, testAsk())
	if _, err := MintLink(dir, p.ID()); !errors.Is(err, ErrNoInbox) {
		t.Fatalf("MintLink without an inbox = %v", err)
	}
	remove, err := Announce(dir, "http://127.0.0.1:4242")
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	if _, err := MintLink(dir, newID()); !errors.Is(err, ErrUnknownAsk) {
		t.Errorf("MintLink for an unknown ask = %v", err)
	}
	link, err := MintLink(dir, p.ID())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(link)
	if err != nil || u.Host != "127.0.0.1:4242" || u.Path != "/a/"+p.ID() {
		t.Fatalf("link %q", link)
	}
	key := u.Query().Get("k")
	entries, _ := os.ReadDir(filepath.Join(dir, "links"))
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, "links", e.Name()))
		if strings.Contains(e.Name()+string(b), key) {
			t.Error("the key is stored in the clear")
		}
	}
	if err := CheckLink(dir, other.ID(), key); !errors.Is(err, ErrBadLink) {
		t.Errorf("the key checked for another ask: %v", err)
	}
	if err := ConsumeLink(dir, other.ID(), key); !errors.Is(err, ErrBadLink) {
		t.Errorf("the key was used for another ask: %v", err)
	}
	if err := CheckLink(dir, p.ID(), strings.Repeat("0", 64)); !errors.Is(err, ErrBadLink) {
		t.Errorf("a made-up key checked: %v", err)
	}
	if err := CheckLink(dir, p.ID(), key); err != nil {
		t.Fatalf("CheckLink = %v", err)
	}
	if err := ConsumeLink(dir, p.ID(), key); err != nil {
		t.Fatalf("ConsumeLink = %v", err)
	}
	if err := ConsumeLink(dir, p.ID(), key); !errors.Is(err, ErrBadLink) {
		t.Errorf("the key worked twice: %v", err)
	}
}

func TestClosingAnAskRemovesItsLinks(t *testing.T) {
	dir := testDir(t)
	p := post(t, dir, testAsk())
	remove, _ := Announce(dir, "http://127.0.0.1:4242")
	defer remove()
	link, err := MintLink(dir, p.ID())
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(link)
	p.Close()
	if err := CheckLink(dir, p.ID(), u.Query().Get("k")); !errors.Is(err, ErrBadLink) {
		t.Errorf("the link outlived its ask: %v", err)
	}
}
