package architecture

import (
	"strings"
	"testing"
)

// What a user outside this module can build, the examples build: their
// programs import only public packages, never internal/. (Their tests may
// reach further, as every test may.)
func TestTheExamplesUseOnlyTheFrontDoors(t *testing.T) {
	t.Parallel()
	for _, p := range packages(t) {
		if !strings.HasPrefix(p.rel(), "examples/") {
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, p.Module.Path+"/") {
				continue
			}
			if to := strings.TrimPrefix(imp, p.Module.Path+"/"); !public(to) && !strings.HasPrefix(to, "examples/") {
				t.Errorf("%s imports %s: an example may use only what a user outside the module can (host, sdk, plugins, pdk/go)", p.rel(), to)
			}
		}
	}
}

// The engine never depends on the content it runs: nothing under host
// imports plugins, directly or through another package (the program hands
// the host its modules).
func TestTheEngineDoesNotImportThePluginsItRuns(t *testing.T) {
	t.Parallel()
	deps := map[string][]string{}
	for _, p := range packages(t) {
		deps[p.ImportPath] = p.Imports
	}
	for _, p := range packages(t) {
		if r := p.rel(); r != "host" && !strings.HasPrefix(r, "host/") {
			continue
		}
		seen := map[string]bool{}
		var walk func(string) bool
		walk = func(path string) bool {
			if seen[path] {
				return false
			}
			seen[path] = true
			if path == p.Module.Path+"/plugins" {
				return true
			}
			for _, d := range deps[path] {
				if walk(d) {
					return true
				}
			}
			return false
		}
		if walk(p.ImportPath) {
			t.Errorf("%s depends on plugins", p.rel())
		}
	}
}
