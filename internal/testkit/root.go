package testkit

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// module is the module path whose go.mod marks the root: host/bench/peers
// has a go.mod of its own, which Root must walk past.
const module = "github.com/toolwarden/toolwarden"

var root = sync.OnceValue(func() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("testkit: the runtime does not say where testkit's source is, so the repository root is unknown")
	}
	dir, found := findModuleRoot(filepath.Dir(file), module)
	if !found {
		panic("testkit: no go.mod declaring module " + module + " above " + file)
	}
	return dir
})

// Root is the repository's root folder: the nearest folder at or above this
// package's source whose go.mod declares toolwarden's module.
func Root() string { return root() }

// Path joins elem onto Root: testkit.Path("plugins", "argguard.wasm").
func Path(elem ...string) string {
	return filepath.Join(append([]string{Root()}, elem...)...)
}

// findModuleRoot walks up from dir to the first folder whose go.mod
// declares module mod.
func findModuleRoot(dir, mod string) (string, bool) {
	for {
		if declaresModule(filepath.Join(dir, "go.mod"), mod) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// declaresModule reports whether the go.mod at path declares module mod.
func declaresModule(path, mod string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 2 && fields[0] == "module" {
			return strings.Trim(fields[1], `"`) == mod
		}
	}
	return false
}
