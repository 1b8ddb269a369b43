package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/toolwarden/toolwarden/host/config"
)

func init() {
	register(command{name: "validate", summary: "check config files and report errors and warnings", run: runValidate})
}

// runValidate loads the layers as every other command would and prints what
// is wrong with them, errors first, one per line (warnings prefixed
// "warning: "), then a one-line summary on success. Exit 1 on any error;
// warnings alone exit 0, since the config loads and means what Codex means.
func runValidate(e *env, args []string) int {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	var configs stringList
	fs.Var(&configs, "config", "config file (repeatable; later files override earlier)")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "usage: toolwarden validate [--config F]...")
		fmt.Fprintln(e.stderr)
		fmt.Fprintln(e.stderr, "Loads the config files as layers and reports errors and warnings as file:line:col.")
		fmt.Fprintln(e.stderr, "With no --config, checks the embedded default. Exit: 0 valid, 1 errors.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(e.stderr, "toolwarden validate: unexpected argument %q (give config files with --config)\n", fs.Arg(0))
		return exitUsage
	}

	cfg, err := config.Load(configs...)
	if err != nil {
		var le *config.LoadError
		if !errors.As(err, &le) {
			fmt.Fprintln(e.stderr, "toolwarden validate:", err)
			return exitError
		}
		for _, d := range le.Diagnostics {
			fmt.Fprintln(e.stderr, d.String())
		}
		return exitError
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(e.stderr, w.String())
	}
	fmt.Fprintf(e.stdout, "ok: %d file(s), %d apps, %d servers, %d policies\n",
		len(configs), len(cfg.Apps), len(cfg.Servers), len(cfg.Policies))
	return exitOK
}
