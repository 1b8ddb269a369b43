package sibling

import (
	"os"
	"runtime/debug"
	"testing"
)

// Builds are told apart by module, version, revision and a modified
// tree; a build without a recorded revision by module and version alone.
func TestIdentityTellsBuildsApart(t *testing.T) {
	build := func(path, version string, settings ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{Main: debug.Module{Path: path, Version: version}}
		for i := 0; i+1 < len(settings); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
		}
		return bi
	}
	const mod = "github.com/toolwarden/toolwarden"
	base := build(mod, "v1.2.0", "vcs.revision", "abc", "vcs.modified", "false", "vcs.time", "2026-01-01T00:00:00Z")
	same := []*debug.BuildInfo{
		build(mod, "v1.2.0", "vcs.revision", "abc", "vcs.modified", "false", "vcs.time", "2026-02-02T00:00:00Z", "CGO_ENABLED", "1"),
	}
	other := []*debug.BuildInfo{
		build("example.com/impostor", "v1.2.0", "vcs.revision", "abc", "vcs.modified", "false"),
		build(mod, "v1.1.0", "vcs.revision", "abc", "vcs.modified", "false"),
		build(mod, "v1.2.0", "vcs.revision", "abd", "vcs.modified", "false"),
		build(mod, "v1.2.0", "vcs.revision", "abc", "vcs.modified", "true"),
		build(mod, "v1.2.0"),
	}
	for _, b := range same {
		if Identity(b) != Identity(base) {
			t.Errorf("%q and %q should be one build", Identity(b), Identity(base))
		}
	}
	for _, b := range other {
		if Identity(b) == Identity(base) {
			t.Errorf("%q passed for %+v", Identity(b), b)
		}
	}
}

// A program is the same build as itself.
func TestSameBuildAcceptsItself(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := SameBuild(self); err != nil {
		t.Fatal(err)
	}
}
