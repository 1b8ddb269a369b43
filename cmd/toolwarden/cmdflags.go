package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// cmdFlags is a command's flag set held to the one CLI convention every
// command follows: --help or -h prints a summary, the usage, a description
// and the flags to stdout and exits 0; bad usage prints one line naming the
// problem and pointing at --help to stderr and exits 2. The flag package's
// own output (a bare flag dump on stderr) is never shown.
type cmdFlags struct {
	*flag.FlagSet
	e        *env
	name     string   // "wrap", "approvals list"
	summary  string   // one line; a registered command's summary by default
	synopsis []string // usage lines without the leading "usage: "
	about    string   // what the command does, how it reads input, what it exits with
}

// newCmdFlags makes the flag set of command name ("check", or "approvals
// list" for a subcommand). synopsis is the usage line after "toolwarden ";
// about is free text, printed as given.
func newCmdFlags(e *env, name, synopsis, about string) *cmdFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	c := &cmdFlags{FlagSet: fs, e: e, name: name, about: about}
	if synopsis != "" {
		c.synopsis = []string{"toolwarden " + synopsis}
	}
	if cmd, ok := commands[name]; ok {
		c.summary = cmd.summary
	}
	return c
}

// parse parses args. When the command must stop here it returns false and
// the exit status: exitOK after --help, exitUsage after a bad flag.
func (c *cmdFlags) parse(args []string) (int, bool) {
	return c.check(c.Parse(args))
}

// parseInterleaved is parse for commands whose flags may come before,
// between or after their positional arguments; it returns the positionals.
func (c *cmdFlags) parseInterleaved(args []string) ([]string, int, bool) {
	var rest []string
	for {
		if code, ok := c.check(c.Parse(args)); !ok {
			return nil, code, false
		}
		args = c.Args()
		if len(args) == 0 {
			return rest, exitOK, true
		}
		if args[0] == "--" {
			return append(rest, args[1:]...), exitOK, true
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}

func (c *cmdFlags) check(err error) (int, bool) {
	if err == nil {
		return exitOK, true
	}
	if errors.Is(err, flag.ErrHelp) {
		c.help(c.e.stdout)
		return exitOK, false
	}
	return c.usageError("%v", err), false
}

// usageError reports bad usage on one line with the way to the help, and
// returns exitUsage.
func (c *cmdFlags) usageError(format string, a ...any) int {
	fmt.Fprintf(c.e.stderr, "toolwarden %s: %s (see: toolwarden %s --help)\n", c.name, fmt.Sprintf(format, a...), c.name)
	return exitUsage
}

// noArgs refuses positional arguments for a command that takes none.
func (c *cmdFlags) noArgs(hint string) (int, bool) {
	if c.NArg() == 0 {
		return exitOK, true
	}
	if hint != "" {
		hint = "; " + hint
	}
	return c.usageError("unexpected argument %q%s", c.Arg(0), hint), false
}

// help writes the whole help text to w.
func (c *cmdFlags) help(w io.Writer) {
	if c.summary != "" {
		fmt.Fprintf(w, "toolwarden %s: %s\n\n", c.name, c.summary)
	}
	for i, s := range c.synopsis {
		if i == 0 {
			fmt.Fprintf(w, "usage: %s\n", s)
		} else {
			fmt.Fprintf(w, "       %s\n", s)
		}
	}
	if c.about != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.about, "\n"))
	}
	hasFlags := false
	c.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprintln(w, "\nflags:")
		c.SetOutput(w)
		c.PrintDefaults()
		c.SetOutput(io.Discard)
	}
}
