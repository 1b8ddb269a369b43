package main

import "github.com/toolwarden/toolwarden/cmd/internal/cli"

// cmdFlags is a command's flag set held to the CLI convention (cli.Flags),
// named for this program's commands.
type cmdFlags struct{ *cli.Flags }

// newCmdFlags makes the flag set of command name ("check", or "approvals
// list" for a subcommand), headed by the registered command's summary.
// synopsis is the usage line after "toolwarden "; about is free text.
func newCmdFlags(e *env, name, synopsis, about string) *cmdFlags {
	summary := ""
	if cmd, ok := commands[name]; ok {
		summary = cmd.summary
	}
	return &cmdFlags{cli.NewFlags(e.stdout, e.stderr, name, summary, synopsis, about)}
}

func (c *cmdFlags) parse(args []string) (int, bool) { return c.ParseArgs(args) }

func (c *cmdFlags) parseInterleaved(args []string) ([]string, int, bool) {
	return c.ParseInterleaved(args)
}

func (c *cmdFlags) usageError(format string, a ...any) int { return c.UsageError(format, a...) }

func (c *cmdFlags) noArgs(hint string) (int, bool) { return c.NoArgs(hint) }
