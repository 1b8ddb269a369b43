package main

import (
	"os/exec"
	"strings"
	"testing"
)

// One name means one thing: the Go guest kit (pdk/go) is the only package
// named pdk; the files `plugin new` embeds from pdk/ are package kits
// (docs/RATIONALE.md, "One package named pdk").
func TestOnlyTheGuestKitIsNamedPdk(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Name}} {{.ImportPath}}", "github.com/toolwarden/toolwarden/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var named []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, path, _ := strings.Cut(line, " "); name == "pdk" {
			named = append(named, path)
		}
	}
	if len(named) != 1 || named[0] != "github.com/toolwarden/toolwarden/pdk/go" {
		t.Errorf("packages named pdk: %v, want only github.com/toolwarden/toolwarden/pdk/go", named)
	}
}
