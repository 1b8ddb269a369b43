// Command toolwarden decides, for every MCP tool call an agent makes, whether
// to allow it, ask the human, or deny it. See the README for a tour.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/internal/plugin"
)

// Exit codes shared by every subcommand.
const (
	exitOK    = cli.ExitOK
	exitError = cli.ExitError // bad input, bad config, internal failure
	exitUsage = cli.ExitUsage
	exitAsk   = cli.ExitAsk
	exitDeny  = cli.ExitDeny
)

// command is one subcommand. Each lives in its own file and registers itself
// in init, so adding a command never edits this file.
type command struct {
	name    string
	summary string
	run     func(env *env, args []string) int
	hidden  bool // not listed in the usage (a process toolwarden starts itself)
}

// env is what a command may touch: its streams and the process environment.
// Tests run commands in-process with their own env.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string

	// ownProcess is set for the process's own streams (main): a hook
	// --warm may then start a warm process. Tests run commands in-process
	// without it.
	ownProcess bool
	// pluginRuntime, when set, holds compiled plugins across the commands
	// a warm hook process runs (hookwarm.go).
	pluginRuntime *plugin.Runtime
	// afterAnswer, when set, takes work that need not delay the answer
	// (closing a host), to run once the answer is sent.
	afterAnswer func(func())
	// ctx, when set, ends when whoever waits for the command's answer has
	// gone (a warm process's hook hanging up).
	ctx context.Context
	// askerPID, when set, is the process the agent ran for a hook event
	// that this one decides (a warm process's hook): an ask names it.
	askerPID int
}

var commands = map[string]command{}

func register(c command) {
	if _, dup := commands[c.name]; dup {
		panic("duplicate command " + c.name)
	}
	commands[c.name] = c
}

func main() {
	os.Exit(run(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, ownProcess: true}, os.Args[1:]))
}

func run(e *env, args []string) int {
	// Servers' stderr readers and the upstream clients of wrap and proxy
	// log from goroutines of their own while the command writes its
	// messages: one Write at a time, so that no line splits another (and a
	// buffer a test gives is never written from two goroutines at once).
	if _, locked := e.stderr.(*lockedWriter); !locked {
		e.stderr = &lockedWriter{w: e.stderr}
	}
	if len(args) == 0 {
		usage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" {
			// toolwarden help wrap is toolwarden wrap --help.
			return run(e, append(args[1:], "--help"))
		}
		usage(e.stdout)
		return exitOK
	case "--version", "-version":
		fmt.Fprintln(e.stdout, buildDescription())
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.stderr, "toolwarden: unknown command %q (see: toolwarden --help)\n", args[0])
		return exitUsage
	}
	return c.run(e, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "toolwarden decides, for every MCP tool call an agent makes, whether to allow it,")
	fmt.Fprintln(w, "ask the human, or deny it.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "usage: toolwarden <command> [flags] [args]")
	fmt.Fprintln(w, "       toolwarden <command> --help    (or: toolwarden help <command>)")
	fmt.Fprintln(w, "       toolwarden --version")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if c.hidden {
			continue
		}
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit status: 0 success, 1 error, 2 bad usage; check also 10 ask, 20 deny.")
}

// lockedWriter makes every Write to w whole: one at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
