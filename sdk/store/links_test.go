package store_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/testkit"
)

// The drivers are this package's cost alone: a Go program that imports
// host and sdk but not sdk/store links neither SQLite nor Postgres. A
// change that made host or sdk import internal/store would fail here.
func TestOnlyAProgramThatImportsSdkStoreLinksTheDatabaseDrivers(t *testing.T) {
	gobin := testkit.LookPath(t, "go")
	drivers := []string{"github.com/jackc/pgx", "sqlite"}
	for _, c := range []struct {
		pkg   string
		links bool
	}{
		{"github.com/toolwarden/toolwarden/host", false},
		{"github.com/toolwarden/toolwarden/sdk", false},
		{"github.com/toolwarden/toolwarden/sdk/store", true},
	} {
		cmd := exec.Command(gobin, "list", "-deps", c.pkg)
		cmd.Dir = testkit.Root()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", c.pkg, err)
		}
		var found []string
		for _, dep := range strings.Fields(string(out)) {
			for _, d := range drivers {
				if strings.Contains(dep, d) {
					found = append(found, dep)
				}
			}
		}
		if (len(found) > 0) != c.links {
			t.Errorf("%s links database drivers %v; want drivers linked: %v", c.pkg, found, c.links)
		}
	}
}
