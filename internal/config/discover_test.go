package config

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Discover looks where the environment it is given says, lists the files
// it looked for in layer order (system, then user), and finds only those
// that exist; it never looks in a project.
func TestDiscoverFindsTheSystemAndUserFilesOfTheGivenEnvironment(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		t.Skip("the user folder is spelt for Linux here")
	}
	t.Parallel()
	dir := t.TempDir()
	sys, home, xdg := filepath.Join(dir, "sys"), filepath.Join(dir, "home"), filepath.Join(dir, "xdg")
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(sys, "config.toml"))
	write(filepath.Join(xdg, "toolwarden", "config.toml"))
	write(filepath.Join(dir, ".toolwarden", "config.toml")) // a project's: never read
	for _, c := range []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"both present, XDG_CONFIG_HOME first", map[string]string{SystemConfigDirEnv: sys, "HOME": home, "XDG_CONFIG_HOME": xdg},
			[]string{filepath.Join(sys, "config.toml"), filepath.Join(xdg, "toolwarden", "config.toml")}},
		{"a relative XDG_CONFIG_HOME is ignored, as os.UserConfigDir does", map[string]string{SystemConfigDirEnv: sys, "HOME": home, "XDG_CONFIG_HOME": "xdg"},
			[]string{filepath.Join(sys, "config.toml")}},
		{"no home: the user file is unknown, the system file still read", map[string]string{SystemConfigDirEnv: sys},
			[]string{filepath.Join(sys, "config.toml")}},
		{"neither present", map[string]string{SystemConfigDirEnv: filepath.Join(dir, "none"), "HOME": home}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := DiscoveredPaths(func(k string) string { return c.env[k] })
			if len(got) != len(c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("got %q, want %q", got, c.want)
				}
			}
		})
	}
	places := Discover(func(k string) string { return map[string]string{SystemConfigDirEnv: sys}[k] })
	if len(places) != 2 || places[0].Role != "system" || places[1].Role != "user" || places[1].Path != "" || places[1].Why == "" {
		t.Fatalf("places without a home: %+v", places)
	}
}
