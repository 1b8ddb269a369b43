package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseRequirements feeds arbitrary bytes to the requirements parser,
// then applies what parses to a config with a stdio and an HTTP server. It
// must never panic, every refusal must be a *LoadError with diagnostics,
// and a requirements file that parses can only disable servers: a server
// the user disabled stays disabled.
//
//	go test -run '^$' -fuzz FuzzParseRequirements -fuzztime 30s -fuzzminimizetime 2s ./host/config/
func FuzzParseRequirements(f *testing.F) {
	files, _ := filepath.Glob("testdata/requirements/*.toml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("[mcp_servers.docs.identity]\ncommand = \"docs-mcp\"\n"))
	f.Add([]byte("[mcp_servers.s]\ncommand = \"c\"\nargs = [{ match = \"regex\", expression = \"a|b\" }]\n"))
	f.Add([]byte("[mcp_servers.r]\nurl = { match = \"prefix\", value = \"https://x/\" }\n[[allowed_servers]]\nurl = \"https://x/\"\n"))
	user, err := LoadBytes("user.toml", []byte("[mcp_servers.s]\ncommand = \"c\"\nargs = [\"a\"]\n[mcp_servers.r]\nurl = \"https://x/mcp\"\n[mcp_servers.off]\ncommand = \"c\"\nenabled = false\n"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRequirements("req.toml", data)
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) || len(le.Diagnostics) == 0 {
				t.Fatalf("error %T without diagnostics: %v", err, err)
			}
			return
		}
		c, err := user.ApplyRequirements(r)
		if err != nil {
			var le *LoadError
			if !errors.As(err, &le) || len(le.Diagnostics) == 0 {
				t.Fatalf("apply: error %T without diagnostics: %v", err, err)
			}
			return
		}
		if Bool(c.Servers["off"].Enabled, true) {
			t.Fatal("a requirements file enabled a server the user disabled")
		}
		if !Bool(user.Servers["s"].Enabled, true) {
			t.Fatal("applying requirements changed the config it was given")
		}
	})
}
