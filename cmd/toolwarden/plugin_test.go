package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runPluginCLI runs "toolwarden plugin args..." in-process with a private
// compilation cache.
func runPluginCLI(t *testing.T, cache string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string {
		if k == "TOOLWARDEN_PLUGIN_CACHE" {
			return cache
		}
		return ""
	}}
	code = run(e, append([]string{"plugin"}, args...))
	return code, out.String(), errOut.String()
}

const (
	exampleWasm = "../../pdk/testdata/conformance/example.wasm"
	vectors     = "../../pdk/testdata/conformance/cases.json"
)

func TestPluginInspect(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	code, out, errOut := runPluginCLI(t, cache, "inspect", exampleWasm)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		exampleWasm + ": ok\n",
		"ABI:      v1 ok",
		"WASI:     not imported (pure sandbox)",
		"  toolwarden.input_read    func   (i32, i32) -> i32",
		"  toolwarden_handle  func   (i32, i32) -> i32",
		`describe: name "example", version "1.0.0", events list, check, observe`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inspect output lacks %q:\n%s", want, out)
		}
	}

	code, out, errOut = runPluginCLI(t, cache, "inspect", "--json", "../../internal/plugin/testdata/hostile/badimport.wasm")
	var rep inspectReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != exitError || rep.ABI != "refused" || !rep.Refused ||
		len(rep.Problems) != 1 || !strings.Contains(rep.Problems[0], `import "env.system" is not granted`) {
		t.Errorf("exit %d report %+v (%v)", code, rep, err)
	}
	if first, _, _ := strings.Cut(errOut, "\n"); !strings.HasPrefix(first, "toolwarden plugin inspect: ../../internal/plugin/testdata/hostile/badimport.wasm: refused: import \"env.system\" is not granted") {
		t.Errorf("stderr's first line is not the refusal:\n%s", errOut)
	}

	code, out, errOut = runPluginCLI(t, cache, "inspect", "builtin:argguard", "--config", `{"rules":[{"arg":"a","ask_regex":"(("}]}`)
	const refused = `refused: plugin "argguard": describe: error code 4 (bad config): rules[0].ask_regex`
	if code != exitError || !strings.Contains(out, "load:     "+refused) {
		t.Errorf("exit %d\n%s", code, out)
	}
	if first, _, _ := strings.Cut(errOut, "\n"); !strings.HasPrefix(first, "toolwarden plugin inspect: builtin:argguard: "+refused) {
		t.Errorf("stderr's first line is not the refusal:\n%s", errOut)
	}
	if first, _, _ := strings.Cut(out, "\n"); !strings.HasPrefix(first, "builtin:argguard: REFUSED: ") {
		t.Errorf("stdout's first line does not say refused:\n%s", out)
	}
}

// Every key of `plugin inspect --json` is snake_case, like the ABI's JSON.
func TestPluginInspectJSONKeysAreSnakeCase(t *testing.T) {
	t.Parallel()
	code, out, errOut := runPluginCLI(t, t.TempDir(), "inspect", "--json", exampleWasm)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	var doc any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	snake := regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`)
	var walk func(v any, path string)
	seen := 0
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				seen++
				if !snake.MatchString(k) {
					t.Errorf("%s: key %q is not snake_case", path, k)
				}
				walk(x, path+"."+k)
			}
		case []any:
			for _, x := range v {
				walk(x, path+"[]")
			}
		}
	}
	walk(doc, "")
	for _, want := range []string{`"module": "toolwarden"`, `"signature": "(i32, i32) -> i32"`, `"describe": {`, `"load_ms"`} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %s:\n%s", want, out)
		}
	}
	if seen < 20 {
		t.Errorf("only %d keys seen", seen)
	}
}

func TestPluginTestRunsTheConformanceVectors(t *testing.T) {
	t.Parallel()
	code, out, errOut := runPluginCLI(t, t.TempDir(), "test", exampleWasm, vectors)
	if code != exitOK || !strings.HasSuffix(out, "PASS: 28/28\n") || strings.Contains(out, "FAIL") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestPluginTestReportsFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := filepath.Join(dir, "cases.json")
	os.WriteFile(cases, []byte(`{"plugin":{"name":"example","config":{"blocked_tool":"rm"}},"cases":[
		{"name":"rm is denied","event":"check","call":{"tool":{"name":"rm"}},"expect":{"decision":"deny","code":"blocked_tool"}},
		{"name":"a wrong expectation","event":"check","call":{"tool":{"name":"ls"}},"expect":{"decision":"allow"}},
		{"name":"labels as a set","event":"observe","call":{"capabilities":{"sees_untrusted_content":true}},"expect":{"labels":["other"]}}]}`), 0o644)
	code, out, _ := runPluginCLI(t, t.TempDir(), "test", "-v", exampleWasm, cases)
	for _, want := range []string{
		"PASS: " + cases + ": rm is denied",
		"FAIL: " + cases + ": a wrong expectation",
		"  decision: want allow, got abstain",
		"  labels: want [other], got [tainted]",
		"PASS: 1/3\nFAIL: 2/3\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code != exitError {
		t.Errorf("exit %d", code)
	}
	if code, _, _ := runPluginCLI(t, t.TempDir(), "test", exampleWasm); code != exitUsage {
		t.Errorf("missing cases file: exit %d", code)
	}
}
