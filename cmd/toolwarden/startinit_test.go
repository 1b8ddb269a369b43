package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Every toolwarden process, one per hook event, runs the init of every
// linked package before main. This package's own init registers commands
// and nothing more: a regexp compiled at package level ({8,64} and
// {0,63} repeat into large programs) cost 0.3 ms and 1,500 allocations
// per process until they were compiled on first use.
func TestStartRunsNoCostlyPackageInit(t *testing.T) {
	t.Parallel()
	binaries(t)
	cmd := exec.Command(built.tw, "version")
	cmd.Env = append(isolated(t, "/usr/bin:/bin"), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	const mainAllocs = 100
	seen := false
	for _, line := range strings.Split(string(out), "\n") {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) < 10 || f[0] != "init" {
			continue
		}
		if f[1] == "main" {
			seen = true
			allocs, err := strconv.Atoi(f[len(f)-2])
			if err != nil || f[len(f)-1] != "allocs" {
				t.Fatalf("cannot read the allocations of: %s", line)
			}
			if allocs > mainAllocs {
				t.Errorf("package main's init makes %d allocations (at most %d): compile what it builds on first use\n%s", allocs, mainAllocs, line)
			}
		}
	}
	if !seen {
		t.Fatalf("no init trace for package main in:\n%s", out)
	}
}
