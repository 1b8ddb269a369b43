package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cacheFiles lists the regular files under dir with their modification
// times.
func cacheFiles(t *testing.T, dir string) map[string]time.Time {
	t.Helper()
	out := map[string]time.Time{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = info.ModTime()
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return out
}

// A hook event is a process of its own: the first one with a plugin keeps
// the plugin's compiled code and its instrumented module in the user cache
// dir, and the next ones load them from there, writing nothing again.
func TestHookEventsReuseCompiledPluginsFromTheUserCache(t *testing.T) {
	t.Parallel()
	binaries(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "tw.toml")
	tools := filepath.Join(dir, "tools.json")
	if err := os.WriteFile(cfg, []byte(hookStartConfig+hookStartArgguard), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tools, []byte(hookStartTools), 0o600); err != nil {
		t.Fatal(err)
	}
	env := isolated(t, "/usr/bin:/bin")
	cache := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_CACHE_HOME="); ok {
			cache = filepath.Join(v, "toolwarden", "wazero")
		}
	}
	event := func() {
		t.Helper()
		r := runBin(t, env, hookStartEvent, built.tw, "hook", "--config", cfg, "--state-dir", filepath.Join(dir, "state"), "--tools", tools)
		if !strings.Contains(r.stdout, `"permissionDecision":"deny"`) || !strings.Contains(r.stdout, "deny_glob") {
			t.Fatalf("argguard did not decide: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	}
	event()
	first := cacheFiles(t, cache)
	compiled, instrumented := 0, 0
	for p := range first {
		if filepath.Base(filepath.Dir(p)) == "instrumented" {
			instrumented++
		} else {
			compiled++
		}
	}
	if compiled == 0 || instrumented == 0 {
		t.Fatalf("after the first event the cache %s holds %d compiled and %d instrumented files: %v", cache, compiled, instrumented, first)
	}
	event()
	again := cacheFiles(t, cache)
	if len(again) != len(first) {
		t.Errorf("the second event wrote to the cache: %d files, then %d", len(first), len(again))
	}
	for p, at := range first {
		if !again[p].Equal(at) {
			t.Errorf("the second event rewrote %s instead of loading it", p)
		}
	}
}
