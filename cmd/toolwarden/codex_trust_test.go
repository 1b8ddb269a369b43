package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docsCodexHook is the hook docs/hooks.md tells a Codex user to add.
const docsCodexHook = `[[hooks.PreToolUse]]
matcher = "^mcp__"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "toolwarden hook --agent codex --config ~/.codex/config.toml"
`

// docsCodexHookHash is the trust hash Codex 0.171 itself gives that hook
// (its app server's hooks/list, currentHash); TestCodexHookTrustIsComputedAsCodexComputesIt
// in internal/hook checks the computation against the installed Codex.
const docsCodexHookHash = "sha256:c26d3ecb4bb6a11a1914ad7ddfc25fef4ff6280bdadec5155487f37d6d33c1da"

func codexUserHome(t *testing.T, config string) (home, key string) {
	t.Helper()
	home = t.TempDir()
	user := filepath.Join(home, ".codex", "config.toml")
	writeTestFile(t, user, config)
	return home, user + ":pre_tool_use:0:0"
}

// validate and init say whether Codex runs the toolwarden hook: for a
// fresh home whose hook nobody trusted, that Codex skips it (and so
// nothing is decided), the exact [hooks.state] entry that trusts it, and
// wrap as the safer set-up; once trusted as Codex records it, that Codex
// runs it; after the command changed, that it must be trusted again; and
// without a toolwarden hook, nothing about Codex hooks at all.
func TestValidateAndInitSayWhetherCodexRunsTheToolwardenHook(t *testing.T) {
	t.Parallel()
	type run struct {
		name string
		args []string
	}
	runs := []run{{"validate", []string{"validate"}}, {"init", []string{"init", "--dry-run"}}}
	cases := []struct {
		name    string
		config  func(key string) string
		want    []string
		notWant []string
	}{
		{"an untrusted hook", func(string) string { return docsCodexHook },
			[]string{"Codex does not run the toolwarden hook", "it is not trusted", "toolwarden decides nothing", `"Trust all and continue"`, `trusted_hash = "` + docsCodexHookHash + `"`, "`toolwarden wrap`"},
			[]string{"is trusted: Codex runs it"}},
		{"a hook trusted as Codex records it", func(key string) string {
			return docsCodexHook + fmt.Sprintf("\n[hooks.state.%q]\ntrusted_hash = %q\n", key, docsCodexHookHash)
		},
			[]string{"is trusted: Codex runs it"},
			[]string{"Codex does not run", "warning: codex"}},
		{"a hook changed since it was trusted", func(key string) string {
			changed := strings.Replace(docsCodexHook, "--agent codex", "--agent codex --warm", 1)
			return changed + fmt.Sprintf("\n[hooks.state.%q]\ntrusted_hash = %q\n", key, docsCodexHookHash)
		},
			[]string{"Codex does not run the toolwarden hook", "it changed since it was trusted"},
			[]string{"is trusted: Codex runs it"}},
		{"a disabled hook", func(key string) string {
			return docsCodexHook + fmt.Sprintf("\n[hooks.state.%q]\nenabled = false\ntrusted_hash = %q\n", key, docsCodexHookHash)
		},
			[]string{"Codex does not run the toolwarden hook", "it is disabled", "delete `enabled = false`"},
			[]string{"is trusted: Codex runs it"}},
		{"no toolwarden hook", func(string) string {
			return strings.Replace(docsCodexHook, "toolwarden hook --agent codex --config ~/.codex/config.toml", "./my-own-check.sh", 1)
		},
			nil,
			[]string{"codex:", "toolwarden hook in"}},
	}
	for _, c := range cases {
		for _, r := range runs {
			t.Run(c.name+"/"+r.name, func(t *testing.T) {
				t.Parallel()
				home, key := codexUserHome(t, "")
				writeTestFile(t, filepath.Join(home, ".codex", "config.toml"), "model = \"gpt-5-codex\"\n"+c.config(key))
				args := append(append([]string{}, r.args...), "--config", filepath.Join(home, "tw.toml"))
				if r.name == "init" {
					args = append(args, "--project", t.TempDir())
				} else {
					writeTestFile(t, filepath.Join(home, "tw.toml"), "")
				}
				code, out, stderr := runCLIEnv(t, map[string]string{"HOME": home}, "", args...)
				all := out + stderr
				if code != exitOK {
					t.Fatalf("exit %d\n%s", code, all)
				}
				for _, w := range c.want {
					if !strings.Contains(all, w) {
						t.Errorf("output lacks %q:\n%s", w, all)
					}
				}
				if strings.Contains(all, "Codex does not run") && !strings.Contains(all, fmt.Sprintf("[hooks.state.%q]", key)) {
					t.Errorf("output does not name the hook's [hooks.state] entry %q:\n%s", key, all)
				}
				for _, w := range c.notWant {
					if strings.Contains(all, w) {
						t.Errorf("output has %q:\n%s", w, all)
					}
				}
			})
		}
	}
}

// A project's own .codex/config.toml hook runs only in a project Codex
// trusts; init says so for a project that is not trusted, even though
// the hook itself has a trusted_hash.
func TestInitSaysCodexLoadsNoHookOfAnUntrustedProject(t *testing.T) {
	t.Parallel()
	home, project := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	projectConfig := filepath.Join(project, ".codex", "config.toml")
	writeTestFile(t, projectConfig, docsCodexHook)
	writeTestFile(t, filepath.Join(home, ".codex", "config.toml"),
		fmt.Sprintf("[hooks.state.%q]\ntrusted_hash = %q\n", projectConfig+":pre_tool_use:0:0", docsCodexHookHash))
	code, out, stderr := runCLIEnv(t, map[string]string{"HOME": home}, "", "init", "--dry-run", "--config", filepath.Join(home, "tw.toml"), "--project", project)
	if code != exitOK || !strings.Contains(out, "Codex does not run the toolwarden hook in "+projectConfig) || !strings.Contains(out, "Codex loads no config of the project "+project) {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	// Trusting the project is what makes the hook run.
	writeTestFile(t, filepath.Join(home, ".codex", "config.toml"),
		fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n\n[hooks.state.%q]\ntrusted_hash = %q\n", project, projectConfig+":pre_tool_use:0:0", docsCodexHookHash))
	code, out, stderr = runCLIEnv(t, map[string]string{"HOME": home}, "", "init", "--dry-run", "--config", filepath.Join(home, "tw.toml"), "--project", project)
	if code != exitOK || !strings.Contains(out, "is trusted: Codex runs it") || strings.Contains(out, "Codex does not run") {
		t.Fatalf("trusted project: exit %d\n%s\n%s", code, out, stderr)
	}
}
