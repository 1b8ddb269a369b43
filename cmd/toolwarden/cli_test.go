package main

import (
	"regexp"
	"sort"
	"strings"
	"testing"
)

// subcommandLine is a usage line that names a subcommand:
// "usage: toolwarden approvals list [flags]" or "       toolwarden plugin test ...".
var subcommandLine = regexp.MustCompile(`(?m)^(?:usage:| +) toolwarden ([a-z]+) ([a-z]+)\b`)

// everyCommand is every command and every subcommand its help names, in
// order: a subcommand added later is held to the convention too.
func everyCommand(t *testing.T) [][]string {
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if c.hidden {
			continue // toolwarden runs it itself (hook-warm: hook's flags)
		}
		names = append(names, n)
	}
	sort.Strings(names)
	var out [][]string
	for _, n := range names {
		out = append(out, []string{n})
		_, help, _ := runCLI(t, "", n, "--help")
		seen := map[string]bool{}
		for _, m := range subcommandLine.FindAllStringSubmatch(help, -1) {
			if m[1] == n && !seen[m[2]] {
				seen[m[2]] = true
				out = append(out, []string{n, m[2]})
			}
		}
	}
	return out
}

func TestEveryCommandWithSubcommandsNamesThemInItsHelp(t *testing.T) {
	t.Parallel()
	want := map[string]bool{
		"approvals list": true, "approvals revoke": true, "approvals add": true, "approvals reset": true,
		"plugin new": true, "plugin inspect": true, "plugin test": true, "tools sync": true, "tools list": true,
	}
	for _, cmd := range everyCommand(t) {
		delete(want, strings.Join(cmd, " "))
	}
	if len(want) > 0 {
		t.Errorf("subcommands not found in their command's help: %v", want)
	}
}

func TestEveryCommandHelpGoesToStdoutAndExitsZero(t *testing.T) {
	t.Parallel()
	for _, cmd := range everyCommand(t) {
		for _, flag := range []string{"--help", "-h"} {
			name := strings.Join(cmd, " ")
			t.Run(name+" "+flag, func(t *testing.T) {
				t.Parallel()
				code, stdout, stderr := runCLI(t, "", append(append([]string{}, cmd...), flag)...)
				if code != exitOK || stderr != "" {
					t.Fatalf("exit %d, stderr %q; want exit 0 and nothing on stderr", code, stderr)
				}
				if !strings.Contains(stdout, "usage: toolwarden "+name) {
					t.Errorf("no usage line for %q in:\n%s", name, stdout)
				}
				// A description, not only a flag dump: the command's summary
				// (or the subcommand's) heads the help.
				if !strings.HasPrefix(stdout, "toolwarden "+name+": ") {
					t.Errorf("help does not start with a description line:\n%s", stdout)
				}
				if len(cmd) == 1 && !strings.Contains(stdout, commands[cmd[0]].summary) {
					t.Errorf("help does not carry the summary %q:\n%s", commands[cmd[0]].summary, stdout)
				}
			})
		}
	}
}

func TestEveryCommandRefusesABadFlagWithOneLineAndExitTwo(t *testing.T) {
	t.Parallel()
	for _, cmd := range everyCommand(t) {
		name := strings.Join(cmd, " ")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(t, "", append(append([]string{}, cmd...), "--no-such-flag")...)
			if code != exitUsage || stdout != "" {
				t.Fatalf("exit %d, stdout %q; want exit 2 and no output", code, stdout)
			}
			// One line that names the command and the way to its help; a
			// command with subcommands takes the flag for an unknown one.
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "toolwarden "+name+": ") ||
				!strings.HasSuffix(stderr, "toolwarden "+name+" --help)\n") || !strings.Contains(stderr, "no-such-flag") {
				t.Errorf("stderr %q; want one line: toolwarden %s: ... no-such-flag ... (see: toolwarden %s --help)", stderr, name, name)
			}
		})
	}
}

func TestTopLevelHelpListsEveryCommandAndVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"help", "--help", "-h"} {
		code, stdout, stderr := runCLI(t, "", arg)
		if code != exitOK || stderr != "" {
			t.Fatalf("%s: exit %d, stderr %q", arg, code, stderr)
		}
		for n, c := range commands {
			if listed := strings.Contains(stdout, "\n  "+n+" "); listed == c.hidden {
				t.Errorf("%s: command %q (hidden %v) listed %v:\n%s", arg, n, c.hidden, listed, stdout)
			}
		}
		if !strings.Contains(stdout, "toolwarden --version") || !strings.Contains(stdout, "\n  version ") {
			t.Errorf("%s: version not in the help:\n%s", arg, stdout)
		}
	}
}

func TestHelpCommandIsTheCommandsHelp(t *testing.T) {
	t.Parallel()
	for _, cmd := range [][]string{{"wrap"}, {"approvals", "list"}} {
		_, want, _ := runCLI(t, "", append(append([]string{}, cmd...), "--help")...)
		code, got, stderr := runCLI(t, "", append([]string{"help"}, cmd...)...)
		if code != exitOK || stderr != "" || got != want {
			t.Errorf("help %v: exit %d, stderr %q, stdout differs from --help: %v", cmd, code, stderr, got != want)
		}
	}
}

func TestBadUsageAtTheTopLevelExitsTwo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{"no command prints the help to stderr", nil, "usage: toolwarden <command>"},
		{"an unknown command points at the help", []string{"wrapp"}, `toolwarden: unknown command "wrapp" (see: toolwarden --help)`},
		{"an unknown flag points at the help", []string{"--verbose"}, `toolwarden: unknown command "--verbose" (see: toolwarden --help)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
		})
	}
}

func TestVersionAndDashDashVersionSayTheSame(t *testing.T) {
	t.Parallel()
	c1, out1, err1 := runCLI(t, "", "version")
	c2, out2, err2 := runCLI(t, "", "--version")
	if c1 != 0 || c2 != 0 || err1 != "" || err2 != "" || out1 != out2 || !strings.HasPrefix(out1, "toolwarden ") {
		t.Errorf("version: %d %q %q; --version: %d %q %q", c1, out1, err1, c2, out2, err2)
	}
	if strings.Contains(out1, "toolwarden dev") {
		t.Errorf("version is the placeholder, not the build's: %q", out1)
	}
}
