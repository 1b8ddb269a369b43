//go:build !unix

package audit

import "io/fs"

// unlinked cannot tell from a descriptor here: a removed log is noticed
// when the path is next stat-ed (at most CheckEvery later).
func unlinked(fs.FileInfo) bool { return false }
