package config

import (
	"math"
	"path/filepath"
	"strings"
)

// This file holds the [audit] table: where toolwarden's decision log is
// written and how large it may grow. The log is on by default (at
// audit.DefaultPath); the table moves it, bounds it or turns it off. Codex
// has no such table; it is toolwarden's own.

// Audit is the [audit] table. The zero value keeps every default.
type Audit struct {
	// Disabled is true when the table says enabled = false.
	Disabled bool
	// Path is where the log is written ("" is the default place); a
	// leading "~/" is the user's home.
	Path string
	// MaxSizeMiB is the size at which the log is rotated (0: default).
	MaxSizeMiB float64
	// Keep is how many rotated files are kept (0: default).
	Keep int
	// Pos is where the table is.
	Pos Position
}

// maxAuditKeep bounds keep: every rotation renames each kept file.
const maxAuditKeep = 100

func (l *loader) audit(p string, v any) *Audit {
	a := &Audit{}
	a.Pos, _ = l.firstPos(p)
	l.table(p, v, fields{
		"enabled": func(p string, v any) { a.Disabled = !l.bool(p, v) },
		"path":    func(p string, v any) { a.Path = l.auditPath(p, v) },
		"max_size_mib": func(p string, v any) {
			f, ok := asNumber(v)
			if !ok || math.IsNaN(f) || f < 0.01 || f > 1<<20 {
				l.errorf(p, "expected a size in MiB between 0.01 and 1048576 (the log is rotated when it reaches it), got %s", describe(v))
				return
			}
			a.MaxSizeMiB = f
		},
		"keep": func(p string, v any) { a.Keep = l.positiveInt(p, v, maxAuditKeep, "rotated files kept") },
	})
	return a
}

// auditPath reads the log's path: absolute, or "~/" for the home, because
// a relative path would land wherever each agent starts its servers.
func (l *loader) auditPath(p string, v any) string {
	s := l.str(p, v)
	if _, ok := v.(string); !ok {
		return ""
	}
	if !filepath.IsAbs(s) && !strings.HasPrefix(s, "~/") {
		l.errorf(p, "%s is not an absolute path: write the whole path (or ~/...), since every agent starts toolwarden in a different directory", quote(s))
		return ""
	}
	return s
}

func asNumber(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
