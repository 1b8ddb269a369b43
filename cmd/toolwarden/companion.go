package main

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/cmd/internal/sibling"
)

// The commands that talk MCP (wrap, proxy, tools) run in toolwarden-mcp,
// which this program replaces itself with: same process id, same stdio,
// same environment, so signals and the exit status are the companion's
// own. Everything else (hook, check, validate...) stays here and links no
// MCP library: a hook event is one process per tool call, and Go runs the
// init of every linked package before main (docs/RATIONALE.md, "Process
// start").
func init() {
	for _, c := range cli.CompanionCommands {
		name := c.Name
		register(command{name: name, summary: c.Summary, run: func(e *env, args []string) int {
			return runCompanion(e, name, args)
		}})
	}
}

// companionPath finds toolwarden-mcp: tests point it at their own build.
var companionPath = findCompanion

// findCompanion looks next to this executable first (the two are
// installed together), then on PATH.
func findCompanion() (string, error) { return sibling.Find(cli.Companion) }

// installHint is the command that installs the companion of this build.
func installHint() string {
	v := version
	if !strings.HasPrefix(v, "v") || strings.Contains(v, "+") {
		v = "latest" // a local build: its own version was never published
	}
	return "go install github.com/toolwarden/toolwarden/cmd/" + cli.Companion + "@" + v
}

// runCompanion hands `toolwarden <name> args...` to the companion. It
// returns only when that could not happen, or when e is not this process's
// own (tests), where the companion runs as a child instead.
func runCompanion(e *env, name string, args []string) int {
	path, err := companionPath()
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden %s: %v; it runs toolwarden's commands that talk MCP (wrap, proxy, tools). Install it next to toolwarden with:\n  %s\n(or: go install github.com/toolwarden/toolwarden/cmd/...@latest, which installs both)\n", name, err, installHint())
		return exitError
	}
	argv := append([]string{path, name}, args...)
	if e.ownProcess {
		err = replaceProcess(path, argv)
		// Only an exec that failed returns.
		fmt.Fprintf(e.stderr, "toolwarden %s: cannot run %s: %v\n", name, path, err)
		return exitError
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() >= 0 {
			return exit.ExitCode()
		}
		fmt.Fprintf(e.stderr, "toolwarden %s: cannot run %s: %v\n", name, path, err)
		return exitError
	}
	return exitOK
}
