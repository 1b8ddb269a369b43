package main

import (
	"fmt"
	"runtime/debug"
	"strings"
)

func init() {
	register(command{name: "version", summary: "print the module version and VCS revision of this build", run: runVersion})
}

func runVersion(e *env, args []string) int {
	fs := newCmdFlags(e, "version", "version",
		`Prints the module version recorded in the binary's build info (the tag for
go install ...@vX, "(devel)" or a pseudo-version for a local build), then the
VCS revision, "+dirty" when the tree had uncommitted changes, and its time.
toolwarden --version prints the same.`)
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if code, ok := fs.noArgs(""); !ok {
		return code
	}
	fmt.Fprintln(e.stdout, buildDescription())
	return exitOK
}

func buildDescription() string {
	bi, _ := debug.ReadBuildInfo()
	return describeBuild(bi)
}

// describeBuild is one line: "toolwarden VERSION", then, when the build
// recorded them, the VCS revision (+dirty) and commit time, and the Go
// version: "toolwarden (devel) revision 9b2328d1c2e3+dirty 2026-11-26T09:00:00Z go1.26.8".
func describeBuild(bi *debug.BuildInfo) string {
	if bi == nil {
		return "toolwarden (unknown: built without module support)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(unknown)"
	}
	parts := []string{"toolwarden", v}
	rev, when, dirty := vcs(bi)
	if rev != "" {
		if dirty {
			rev += "+dirty"
		}
		parts = append(parts, "revision", rev)
	}
	if when != "" {
		parts = append(parts, when)
	}
	if bi.GoVersion != "" {
		parts = append(parts, bi.GoVersion)
	}
	return strings.Join(parts, " ")
}

// vcs is what Go recorded of the source a build came from: its revision
// and commit time ("" when it recorded none), and whether the tree had
// changes not committed.
func vcs(bi *debug.BuildInfo) (revision, time string, modified bool) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			time = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return revision, time, modified
}
