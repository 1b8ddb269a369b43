package config

import (
	"strings"
	"testing"
)

// The [audit] table is read whole, and a value that cannot be honoured is
// an error at its key that says what is wanted.
func TestTheAuditTable(t *testing.T) {
	cfg, err := LoadBytes("c.toml", []byte("[audit]\nenabled = false\npath = \"~/logs/a.jsonl\"\nmax_size_mib = 0.5\nkeep = 7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Audit; a == nil || !a.Disabled || a.Path != "~/logs/a.jsonl" || a.MaxSizeMiB != 0.5 || a.Keep != 7 {
		t.Errorf("[audit] read as %+v", cfg.Audit)
	}
	for _, tc := range []struct{ body, want string }{
		{"path = \"logs/a.jsonl\"", "audit.path"},
		{"max_size_mib = 0", "between 0.01 and 1048576"},
		{"keep = 0", "from 1 to 100"},
		{"enabled = \"no\"", "expected a boolean"},
		{"size = 3", "unknown key"},
	} {
		_, err := LoadBytes("c.toml", []byte("[audit]\n"+tc.body+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error naming %q", tc.body, err, tc.want)
		}
	}
}
