package main

import (
	"runtime/debug"
	"testing"
)

func TestDescribeBuildReportsModuleVersionAndRevision(t *testing.T) {
	t.Parallel()
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name string
		bi   *debug.BuildInfo
		want string
	}{
		{
			name: "go install of a tag reports the tag",
			bi:   &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}},
			want: "toolwarden v1.4.0 go1.26.8",
		},
		{
			name: "a local build from a dirty tree reports devel, the revision, +dirty and its time",
			bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
				Settings: vcs("vcs", "git", "vcs.revision", "9b2328d1c2e3", "vcs.time", "2026-11-26T09:00:00Z", "vcs.modified", "true")},
			want: "toolwarden (devel) revision 9b2328d1c2e3+dirty 2026-11-26T09:00:00Z go1.26.8",
		},
		{
			name: "a clean local build has no +dirty",
			bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126090000-9b2328d1c2e3"},
				Settings: vcs("vcs.revision", "9b2328d1c2e3", "vcs.modified", "false")},
			want: "toolwarden v0.0.0-20261126090000-9b2328d1c2e3 revision 9b2328d1c2e3",
		},
		{
			name: "no build info says so",
			want: "toolwarden (unknown: built without module support)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := describeBuild(tt.bi); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
