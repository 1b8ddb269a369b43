package cli

import "runtime/debug"

// Version is the module version of this build as Go recorded it: the tag
// for `go install ...@vX`, "(devel)" (or a pseudo-version) for a local
// build. wrap and proxy announce it as their server version.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Version == "" {
		return "(unknown)"
	}
	return bi.Main.Version
}
