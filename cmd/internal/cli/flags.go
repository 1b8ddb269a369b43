package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Flags is a command's flag set held to the one CLI convention every
// command follows: --help or -h prints a summary, the usage, a description
// and the flags to stdout and exits 0; bad usage prints one line naming the
// problem and pointing at --help to stderr and exits 2. The flag package's
// own output (a bare flag dump on stderr) is never shown.
type Flags struct {
	*flag.FlagSet
	Stdout, Stderr io.Writer
	Name           string   // "wrap", "approvals list"
	Summary        string   // one line; a registered command's summary by default
	Synopsis       []string // usage lines without the leading "usage: "
	About          string   // what the command does, how it reads input, what it exits with
}

// NewFlags makes the flag set of command name ("check", or "approvals
// list" for a subcommand). synopsis is the usage line after "toolwarden ";
// about is free text, printed as given.
func NewFlags(stdout, stderr io.Writer, name, summary, synopsis, about string) *Flags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	c := &Flags{FlagSet: fs, Stdout: stdout, Stderr: stderr, Name: name, Summary: summary, About: about}
	if synopsis != "" {
		c.Synopsis = []string{"toolwarden " + synopsis}
	}
	return c
}

// ParseArgs parses args. When the command must stop here it returns false
// and the exit status: ExitOK after --help, ExitUsage after a bad flag.
func (c *Flags) ParseArgs(args []string) (int, bool) {
	return c.check(c.Parse(args))
}

// ParseInterleaved is ParseArgs for commands whose flags may come before,
// between or after their positional arguments; it returns the positionals.
func (c *Flags) ParseInterleaved(args []string) ([]string, int, bool) {
	var rest []string
	for {
		if code, ok := c.check(c.Parse(args)); !ok {
			return nil, code, false
		}
		args = c.Args()
		if len(args) == 0 {
			return rest, ExitOK, true
		}
		if args[0] == "--" {
			return append(rest, args[1:]...), ExitOK, true
		}
		rest = append(rest, args[0])
		args = args[1:]
	}
}

func (c *Flags) check(err error) (int, bool) {
	if err == nil {
		return ExitOK, true
	}
	if errors.Is(err, flag.ErrHelp) {
		c.Help(c.Stdout)
		return ExitOK, false
	}
	return c.UsageError("%v", err), false
}

// UsageError reports bad usage on one line with the way to the help, and
// returns ExitUsage.
func (c *Flags) UsageError(format string, a ...any) int {
	fmt.Fprintf(c.Stderr, "toolwarden %s: %s (see: toolwarden %s --help)\n", c.Name, fmt.Sprintf(format, a...), c.Name)
	return ExitUsage
}

// NoArgs refuses positional arguments for a command that takes none.
func (c *Flags) NoArgs(hint string) (int, bool) {
	if c.NArg() == 0 {
		return ExitOK, true
	}
	if hint != "" {
		hint = "; " + hint
	}
	return c.UsageError("unexpected argument %q%s", c.Arg(0), hint), false
}

// Help writes the whole help text to w.
func (c *Flags) Help(w io.Writer) {
	if c.Summary != "" {
		fmt.Fprintf(w, "toolwarden %s: %s\n\n", c.Name, c.Summary)
	}
	for i, s := range c.Synopsis {
		if i == 0 {
			fmt.Fprintf(w, "usage: %s\n", s)
		} else {
			fmt.Fprintf(w, "       %s\n", s)
		}
	}
	if c.About != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(c.About, "\n"))
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

// StringList is a flag that may be given more than once, keeping every
// value in order: --config a.toml --config b.toml layers b over a.
type StringList []string

func (s *StringList) String() string { return strings.Join(*s, ",") }

// Set appends v.
func (s *StringList) Set(v string) error {
	*s = append(*s, v)
	return nil
}
