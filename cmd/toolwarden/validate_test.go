package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/toolwarden/toolwarden/internal/config"
)

// runValidateCLI runs "toolwarden validate args..." in-process.
func runValidateCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	code = run(e, append([]string{"validate"}, args...))
	return code, out.String(), errOut.String()
}

func writeConfig(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeConfig(t, dir, "good.toml", `
model = "gpt-5.1-codex"
[apps.github]
destructive_enabled = false
[mcp_servers.github]
url = "https://api.githubcopilot.com/mcp/"
[mcp_servers.fs]
command = "npx"
[policies.trifecta]
builtin = "trifecta"
`)
	project := writeConfig(t, dir, "project.toml", "[mcp_servers.fs]\nenabled = false\n")
	trap := writeConfig(t, dir, "trap.toml", "[apps._default]\nenabled = false\n[apps.github]\ndestructive_enabled = false\n")
	bad := writeConfig(t, dir, "bad.toml", "[apps._default]\nenabled = false\n[apps.github]\n  destructive_enable = false\n")
	syntax := writeConfig(t, dir, "syntax.toml", "[apps.github\n")

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{
			name:       "a valid config prints a summary and exits 0",
			args:       []string{"--config", good},
			wantStdout: "ok: 1 file(s), 1 apps, 2 servers, 1 policies\n",
		},
		{
			name:       "layers are counted and merged",
			args:       []string{"--config", good, "--config", project},
			wantStdout: "ok: 2 file(s), 1 apps, 2 servers, 1 policies\n",
		},
		{
			name:       "warnings are printed but do not fail",
			args:       []string{"--config", trap},
			wantStdout: "ok: 1 file(s), 1 apps, 0 servers, 0 policies\n",
			wantStderr: "warning: " + trap + `:3:7: apps.github: app "github" is enabled even though apps._default.enabled = false, because an [apps.github] table without "enabled" means enabled = true (as in Codex); add enabled = false to keep it off, or enabled = true to say it is meant` + "\n",
		},
		{
			name:     "errors come first, then warnings, and exit 1",
			args:     []string{"--config", bad},
			wantCode: 1,
			wantStderr: bad + `:4:3: apps.github: unknown key "destructive_enable" (did you mean "destructive_enabled"?)` + "\n" +
				"warning: " + bad + `:3:7: apps.github: app "github" is enabled even though apps._default.enabled = false, because an [apps.github] table without "enabled" means enabled = true (as in Codex); add enabled = false to keep it off, or enabled = true to say it is meant` + "\n",
		},
		{
			name:       "a syntax error is reported with its position",
			args:       []string{"--config", syntax},
			wantCode:   1,
			wantStderr: syntax + ":1:13: invalid TOML: expected '.' or ']' to end table name, but got '\\n' instead\n",
		},
		{
			name:       "a missing file is an error",
			args:       []string{"--config", filepath.Join(dir, "nope.toml")},
			wantCode:   1,
			wantStderr: filepath.Join(dir, "nope.toml") + ": cannot read config file: no such file or directory\n",
		},
		{
			name:       "a stray argument is a usage error",
			args:       []string{good},
			wantCode:   2,
			wantStderr: `toolwarden validate: unexpected argument "` + good + `"; give config files with --config (see: toolwarden validate --help)` + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runValidateCLI(t, tt.args...)
			if code != tt.wantCode || stdout != tt.wantStdout || stderr != tt.wantStderr {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s",
					code, stdout, stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
		})
	}
}

func TestValidateAcceptsARealCodexConfig(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runValidateCLI(t, "--config", "../../internal/config/testdata/codex-full.toml")
	if code != 0 || stdout != "ok: 1 file(s), 3 apps, 5 servers, 0 policies\n" || stderr != "" {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
}

var builtinList = regexp.MustCompile(`\(built in: [^)]*\)`)

// TestValidateReportsWhatLoadingWouldFind runs validate on every
// testdata/validate/*.toml and compares exit status, stdout and stderr with
// the .golden file beside it. Run with -update to rewrite them after a
// deliberate change, then review the diff.
func TestValidateReportsWhatLoadingWouldFind(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/validate/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".toml"), func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runValidateCLI(t, "--config", file)
			got := fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", code, stdout, stderr)
			// Resolved plugin paths are absolute; the golden files are not.
			got = strings.ReplaceAll(got, cwd+string(filepath.Separator), "")
			// Which plugins are built in changes as plugins are added.
			got = builtinList.ReplaceAllString(got, "(built in: ...)")
			checkGolden(t, strings.TrimSuffix(file, ".toml")+".golden", got)
		})
	}
}

func TestValidateFailsWheneverAPluginDoesNotLoad(t *testing.T) {
	t.Parallel()
	// Whatever else the golden files say, these must never pass.
	for _, name := range []string{"readme-snippet", "plugin-config-refused", "plugin-bad-module"} {
		code, stdout, _ := runValidateCLI(t, "--config", filepath.Join("testdata", "validate", name+".toml"))
		if code != exitError || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q; want exit 1 and no ok line", name, code, stdout)
		}
	}
}

func TestStringListKeepsEveryValueInOrder(t *testing.T) {
	t.Parallel()
	var s stringList
	for _, v := range []string{"a.toml", "b.toml", "a.toml"} {
		if err := s.Set(v); err != nil {
			t.Fatal(err)
		}
	}
	if s.String() != "a.toml,b.toml,a.toml" || len(s) != 3 {
		t.Errorf("stringList = %v", s)
	}
}

// checkGolden compares got with the golden file, or rewrites the file
// with -update.
func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update to accept, then review the diff)\n--- got\n%s--- want\n%s", golden, got, want)
	}
}

// TestValidateListsWhatRequirementsOverride: validate names every user
// setting a requirements file replaced, and where the requirement is.
func TestValidateListsWhatRequirementsOverride(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "requirements")
	code, stdout, stderr := runValidateCLI(t, "--config", filepath.Join(dir, "user.toml"),
		"--requirements", filepath.Join(dir, "requirements.toml"))
	checkGolden(t, filepath.Join(dir, "validate.golden"),
		fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", code, stdout, stderr))
}

// TestExplainSaysWhichRequirementDecided: explain's trace and reason name
// the requirements file and line that hid the tool.
func TestExplainSaysWhichRequirementDecided(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "requirements")
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(`{"server":"filesystem","tool":{"name":"write_file","inputSchema":{"type":"object"}},"arguments":{}}`),
		stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	code := run(e, []string{"explain", "--config", filepath.Join(dir, "user.toml"), "--requirements", filepath.Join(dir, "requirements.toml")})
	want := "tool is disabled (required by " + filepath.Join(dir, "requirements.toml") + ":12:1)"
	if code != exitOK || !strings.Contains(out.String(), "=> DENY") || strings.Count(out.String(), want) != 2 {
		t.Errorf("exit %d, stdout:\n%s\nstderr: %s\nwant a deny saying %q in the trace and the reason", code, out.String(), errOut.String(), want)
	}
}

// With no --config and neither discovered file present, validate says so
// and checks the embedded default.
func TestValidateWithNoConfigFileListsWhatItLookedForAndChecksTheDefault(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vars := map[string]string{"HOME": filepath.Join(dir, "home"), config.SystemConfigDirEnv: filepath.Join(dir, "sys")}
	code, stdout, stderr := runCLIEnv(t, vars, "", "validate")
	want := "config files (no --config given; later ones override earlier):\n" +
		"  system        " + filepath.Join(dir, "sys", "config.toml") + " (not present)\n" +
		"  user          " + filepath.Join(dir, "home", ".config", "toolwarden", "config.toml") + " (not present)\n" +
		"  none is present: the embedded default is in force (\"toolwarden init\" writes the user file)\n"
	if code != exitOK || !strings.HasPrefix(stdout, want) || !strings.HasSuffix(stdout, "ok: 0 file(s), 0 apps, 0 servers, 0 policies\n") {
		t.Fatalf("exit %d\n%s%s\nwant it to start with\n%s", code, stdout, stderr, want)
	}
}
