package cli

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"
)

// ParseWrap is the one reading of wrap's command line: wrap runs the
// command it finds, and the hook judges that same command. Flags end at
// the first argument that is not one, so a later "--" is the server's.
func TestParseWrapFindsTheCommandWrapRuns(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		args    []string
		command []string // nil: wrap refuses
		stderr  string
	}{
		{"the command after --", []string{"--app", "fs", "--", "npx", "-y", "pkg"}, []string{"npx", "-y", "pkg"}, ""},
		{"the command without --", []string{"--quiet", "npx", "-y"}, []string{"npx", "-y"}, ""},
		{"a later -- belongs to the command", []string{"python3", "evil.py", "--", "npx", "-y", "pkg"}, []string{"python3", "evil.py", "--", "npx", "-y", "pkg"}, ""},
		{"a flag's value may be --", []string{"--app", "--", "npx"}, []string{"npx"}, ""},
		{"every shared flag parses", []string{"--config", "a", "--requirements", "r", "--approvals", "x", "--audit", "y", "--max-arg-bytes", "9", "--approval-timeout", "1s", "--no-watch", "--tool-timeout", "2s", "--startup-timeout", "3s", "--", "s"}, []string{"s"}, ""},
		{"an unknown flag is refused", []string{"--no-such-flag", "--", "npx"}, nil, "flag provided but not defined"},
		{"a bad value is refused", []string{"--max-arg-bytes", "lots", "--", "npx"}, nil, "invalid value"},
		{"no command is refused", []string{"--app", "fs", "--"}, nil, "no server command given"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			_, f, _, ok := ParseWrap(io.Discard, &stderr, ServeDefaults{}, tc.args)
			switch {
			case tc.command == nil && (ok || !strings.Contains(stderr.String(), tc.stderr)):
				t.Fatalf("ok %v, stderr %q; want a refusal saying %q", ok, stderr.String(), tc.stderr)
			case tc.command != nil && (!ok || !slices.Equal(f.Command, tc.command)):
				t.Fatalf("ok %v, command %q (stderr %q); want %q", ok, f.Command, stderr.String(), tc.command)
			}
		})
	}
}

// ParseProxy takes flags alone: the servers come from the config.
func TestParseProxyReadsTheRequirementsItWouldLoad(t *testing.T) {
	t.Parallel()
	_, f, _, ok := ParseProxy(io.Discard, io.Discard, ServeDefaults{}, []string{"--config", "c.toml", "--requirements", "a.toml", "--requirements", "b.toml"})
	if !ok || !slices.Equal(f.Requirements, StringList{"a.toml", "b.toml"}) || !slices.Equal(f.Configs, StringList{"c.toml"}) {
		t.Fatalf("ok %v, %+v", ok, f)
	}
	if _, _, _, ok := ParseProxy(io.Discard, io.Discard, ServeDefaults{}, []string{"--config", "c.toml", "extra"}); ok {
		t.Fatal("a positional argument was accepted")
	}
}
