package plugins

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

func TestBuiltins(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "argguard,secrets,trifecta" {
		t.Errorf("Names() = %s", got)
	}
	for _, n := range Names() {
		b, ok := Builtin(n)
		if !ok || !bytes.HasPrefix(b, []byte("\x00asm")) {
			t.Errorf("%s: not a wasm module", n)
		}
	}
	if _, ok := Builtin("nope"); ok {
		t.Error("unknown builtin found")
	}
}

// The committed .wasm files are exactly what scripts/build-plugins.sh makes
// of the sources, and two builds agree byte for byte.
func TestBuiltinsAreReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every plugin twice")
	}
	script, err := os.ReadFile("../scripts/build-plugins.sh")
	if err != nil {
		t.Fatal(err)
	}
	pin := regexp.MustCompile(`(?m)^PLUGIN_GO=(\S+)`).FindSubmatch(script)
	local, _ := exec.Command("go", "env", "GOVERSION").Output()
	if pin == nil || strings.TrimSpace(string(local)) != string(pin[1]) {
		msg := "local Go " + strings.TrimSpace(string(local)) + " is not the pinned " + string(pin[1]) + " (the script would download it)"
		if os.Getenv("TOOLWARDEN_REQUIRE_TOOLCHAINS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	cmd := exec.Command("sh", "../scripts/build-plugins.sh", "--verify")
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == 3 && os.Getenv("TOOLWARDEN_REQUIRE_TOOLCHAINS") != "1" {
		t.Skipf("a toolchain is missing:\n%s", out)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
