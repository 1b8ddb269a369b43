// Command toolwarden-hook is `toolwarden hook --warm` in a program that
// starts in about the time of a hello world (docs/hooks.md, "Warm
// hooks"). It hands the event on stdin to the warm process of the same
// invocation and relays its answer; when there is none (the first event,
// or after an idle exit), it runs `toolwarden hook --warm` with the event,
// which decides it and starts the warm process for the next one. Either
// way the answer is toolwarden's own.
//
//	toolwarden-hook [hook flags] < EVENT.json
//
// It links the standard library, golang.org/x/sys/unix (to hand the event
// over in its own place) and two small packages of ours alone: toolwarden
// links wazero, the TOML parser and the policy engine, whose package init
// is most of its start.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/toolwarden/toolwarden/cmd/internal/sibling"
	"github.com/toolwarden/toolwarden/cmd/internal/warm"
)

// exitBlock is what every supported agent reads as "block this call".
const exitBlock = 2

// installBoth is how to install toolwarden and this client together.
const installBoth = "install both with: go install github.com/toolwarden/toolwarden/cmd/...@latest"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(flags []string, stdin io.Reader, stdout, stderr io.Writer) int {
	args := append([]string{"--warm"}, flags...)
	event, err := io.ReadAll(io.LimitReader(stdin, warm.MaxEvent+1))
	if err != nil {
		fmt.Fprintf(stderr, "toolwarden-hook: reading the event: %v (call blocked)\n", err)
		return exitBlock
	}
	tw, err := findToolwarden()
	if err != nil {
		fmt.Fprintf(stderr, "toolwarden-hook: %v (call blocked)\n", err)
		return exitBlock
	}
	debug := os.Getenv(warm.DebugEnv) == "1"
	if warm.Supported {
		place, err := warm.PlaceFor(warm.RendezvousDir(), tw, args)
		if err == nil {
			var code int
			if code, _, err = place.Relay(event, stdout, stderr, debug); err == nil {
				return code
			}
		}
		if debug {
			fmt.Fprintf(stderr, "toolwarden-hook: handing the event to toolwarden: %v\n", err)
		}
	}
	// Only now is toolwarden run: a program of another build, or one
	// that merely has the name, is refused (a warm process of another
	// build has another socket name, warm.Key, so the relay above never
	// met one).
	if err := sibling.SameBuild(tw); err != nil {
		fmt.Fprintf(stderr, "toolwarden-hook: %v; %s (call blocked)\n", err, installBoth)
		return exitBlock
	}
	argv := append([]string{"hook"}, args...)
	if stdout == os.Stdout && stderr == os.Stderr {
		// toolwarden takes this process's place, so that whatever ends
		// the hook (the agent's timeout) ends its wait too; it returns
		// only when that could not be done.
		_ = handOver(tw, argv, event)
	}
	cmd := exec.Command(tw, argv...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(event), stdout, stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitCode()
	default:
		fmt.Fprintf(stderr, "toolwarden-hook: running %s: %v (call blocked)\n", tw, err)
		return exitBlock
	}
}

// findToolwarden finds the toolwarden this client speaks for: next to
// this executable first (the two are installed together), then on PATH.
// The path is the one toolwarden's own os.Executable reports (symlinks
// resolved), since the warm process is named after it.
func findToolwarden() (string, error) {
	p, err := sibling.Locate("toolwarden")
	if err != nil {
		return "", fmt.Errorf("%v; %s", err, installBoth)
	}
	return resolved(p)
}

func resolved(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(p)
}
