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
// the user disabled stays disabled, and a server whose env loads code runs
// only under an entry that names the variable.
//
//	go test -run '^$' -fuzz FuzzParseRequirements -fuzztime 30s -fuzzminimizetime 2s ./internal/config/
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
	f.Add([]byte("[[allowed_servers]]\ncommand = \"c\"\nenv = { NODE_OPTIONS = { match = \"prefix\", value = \"--require\" } }\n"))
	f.Add([]byte("[mcp_servers.evil]\ncommand = \"c\"\ncwd = { match = \"regex\", expression = \"/srv/.*\" }\nenv = { A = { match = \"exact\", value = \"b\" } }\n"))
	f.Add([]byte("[[allowed_servers]]\ncommand = \"./c\"\ncwd = { match = \"exact\", value = \"/srv\" }\n"))
	user, err := LoadBytes("user.toml", []byte("[mcp_servers.s]\ncommand = \"c\"\nargs = [\"a\"]\n[mcp_servers.r]\nurl = \"https://x/mcp\"\n[mcp_servers.off]\ncommand = \"c\"\nenabled = false\n[mcp_servers.evil]\ncommand = \"c\"\nenv = { NODE_OPTIONS = \"--require evil.js\" }\n"))
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
		if Bool(c.Servers["evil"].Enabled, true) && c.HasServerAllowLists() && !namesNodeOptions(r) {
			t.Fatal("a server whose env sets NODE_OPTIONS runs under allow-lists that never name it")
		}
		if !Bool(user.Servers["s"].Enabled, true) {
			t.Fatal("applying requirements changed the config it was given")
		}
	})
}

// namesNodeOptions reports whether an allow-list entry of r names
// NODE_OPTIONS.
func namesNodeOptions(r *Requirements) bool {
	for _, a := range r.AllowedServers {
		if _, ok := a.Env["NODE_OPTIONS"]; ok {
			return true
		}
	}
	for _, s := range r.Servers {
		if _, ok := s.Env["NODE_OPTIONS"]; ok {
			return true
		}
	}
	return false
}
