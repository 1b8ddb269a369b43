// Command toolwarden-mcp is the part of toolwarden that talks MCP: wrap,
// proxy and tools. Users run `toolwarden wrap ...` (or proxy, tools), and
// toolwarden replaces itself with this program, found next to it or on
// PATH; both come from `go install github.com/toolwarden/toolwarden/cmd/...`.
// It is a program of its own so that toolwarden's other commands, a hook
// event above all, link no MCP library (docs/RATIONALE.md, "Process start").
package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
)

const (
	exitOK    = cli.ExitOK
	exitError = cli.ExitError
	exitUsage = cli.ExitUsage
)

// env is what a command may touch: its streams and the process environment.
// Tests run commands in-process with their own env.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	getenv func(string) string
}

// commands are this program's commands; each is one of
// cli.CompanionCommands and registers itself in its file's init.
var commands = map[string]func(*env, []string) int{}

func register(name string, run func(*env, []string) int) {
	if cli.CompanionSummary(name) == "" {
		panic("command " + name + " is not in cli.CompanionCommands")
	}
	commands[name] = run
}

// newCmdFlags makes the flag set of command name ("wrap", "tools sync"),
// headed by the command's summary.
func newCmdFlags(e *env, name, synopsis, about string) *cli.Flags {
	return cli.NewFlags(e.stdout, e.stderr, name, cli.CompanionSummary(name), synopsis, about)
}

func main() {
	os.Exit(run(&env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}, os.Args[1:]))
}

func run(e *env, args []string) int {
	// Servers' stderr readers and the upstream clients log from goroutines
	// of their own while the command writes its messages: one Write at a
	// time, so that no line splits another (and a buffer a test gives is
	// never written from two goroutines at once).
	e.stderr = &lockedWriter{w: e.stderr}
	if len(args) > 0 {
		if c, ok := commands[args[0]]; ok {
			return c(e, args[1:])
		}
	}
	w, code := e.stderr, exitUsage
	if len(args) > 0 && (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
		w, code = e.stdout, exitOK
	}
	fmt.Fprintf(w, "%s is the part of toolwarden that talks MCP; run it as toolwarden <command>:\n\n", cli.Companion)
	for _, c := range cli.CompanionCommands {
		fmt.Fprintf(w, "  toolwarden %-6s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintln(w, "\nsee: toolwarden --help")
	return code
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
