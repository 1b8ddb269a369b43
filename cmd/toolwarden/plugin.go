package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/plugintest"
	"github.com/toolwarden/toolwarden/plugins"
)

func init() {
	register(command{name: "plugin", summary: "create, inspect and test WebAssembly policy plugins", run: runPlugin})
}

func pluginUsage(w io.Writer) {
	fmt.Fprintf(w, "toolwarden plugin: %s\n\n", commands["plugin"].summary)
	fmt.Fprintln(w, `usage: toolwarden plugin new --lang go|rust|c|assemblyscript|wat [--dir DIR] [--pdk PATH] NAME
       toolwarden plugin inspect [--config JSON] [--json] PLUGIN
       toolwarden plugin test [--run REGEXP] [-v] PLUGIN CASES.json...

PLUGIN is a .wasm file, or builtin:NAME for a plugin built into toolwarden (`+strings.Join(plugins.Names(), ", ")+`).

new      creates a plugin project in DIR (default ./NAME): the plugin, a README, build.sh
         (finds the toolchain or says how to get it), cases.json and a config that enforces
         it. --pdk (Go) builds against a toolwarden checkout. Then: DIR/build.sh and
         toolwarden plugin test DIR/NAME.wasm DIR/cases.json.
inspect  checks the module against ABI v1 without running it (exports, imports, signatures),
         then loads it and prints its describe answer. Exit 1 if the plugin is refused.
test     runs the cases of each CASES.json file (format: pdk/testdata/README.md) and prints a
         line per failing case (-v: per case). Exit 1 if any case fails.

Run toolwarden plugin <subcommand> --help for its flags.`)
}

// pluginSubs are the plugin subcommands' help texts.
var pluginSubs = map[string]struct{ summary, synopsis, about string }{
	"new": {
		summary:  "create a buildable plugin project",
		synopsis: "plugin new --lang go|rust|c|assemblyscript|wat [--dir DIR] [--pdk PATH] NAME",
		about: `Creates a plugin project in DIR (default ./NAME): the plugin, a README, build.sh
(finds the toolchain or says how to get it), cases.json and a config that enforces
it. --pdk (Go) builds against a toolwarden checkout. Then: DIR/build.sh and
toolwarden plugin test DIR/NAME.wasm DIR/cases.json.`,
	},
	"inspect": {
		summary:  "check a plugin against the ABI and print its describe answer",
		synopsis: "plugin inspect [--config JSON] [--json] PLUGIN",
		about: `PLUGIN is a .wasm file, or builtin:NAME for a plugin built into toolwarden.
Checks the module against ABI v1 without running it (exports, imports, signatures),
then loads it with --config and prints its describe answer.
Exit: 0 loaded, 1 refused, 2 bad usage.`,
	},
	"test": {
		summary:  "run a plugin's test cases",
		synopsis: "plugin test [--run REGEXP] [-v] PLUGIN CASES.json...",
		about: `PLUGIN is a .wasm file, or builtin:NAME for a plugin built into toolwarden.
Runs the cases of each CASES.json file (format: pdk/testdata/README.md) and prints a
line per failing case (-v: per case). A case is one event, or "steps": list, check
and observe events played in one session, the labels each adds carried to the next.
An unknown key anywhere in a file is an error (file:line:col, did you mean ...).
Exit: 0 every case passed, 1 a case failed or could not run, 2 bad usage.`,
	},
}

// newPluginFlags is the flag set of a plugin subcommand.
func newPluginFlags(e *env, sub string) *cmdFlags {
	h := pluginSubs[sub]
	fs := newCmdFlags(e, "plugin "+sub, h.synopsis, h.about)
	fs.Summary = h.summary
	return fs
}

func runPlugin(e *env, args []string) int {
	if len(args) == 0 {
		pluginUsage(e.stderr)
		return exitUsage
	}
	switch args[0] {
	case "new":
		return runPluginNew(e, args[1:])
	case "inspect":
		return runPluginInspect(e, args[1:])
	case "test":
		return runPluginTest(e, args[1:])
	case "help", "-h", "--help":
		pluginUsage(e.stdout)
		return exitOK
	}
	fmt.Fprintf(e.stderr, "toolwarden plugin: unknown subcommand %q: new, inspect or test (see: toolwarden plugin --help)\n", args[0])
	return exitUsage
}

// readPlugin reads a .wasm file or a builtin:NAME.
func readPlugin(arg string) ([]byte, error) {
	if name, ok := strings.CutPrefix(arg, "builtin:"); ok {
		b, ok := plugins.Builtin(name)
		if !ok {
			return nil, fmt.Errorf("no built-in plugin %q (built in: %s)", name, strings.Join(plugins.Names(), ", "))
		}
		return b, nil
	}
	return os.ReadFile(arg)
}

// pluginRuntime is a runtime whose plugin logs go to stderr.
func pluginRuntime(ctx context.Context, e *env) (*plugin.Runtime, error) {
	return pluginRuntimeLogTo(ctx, e, e.stderr)
}

// pluginRuntimeLogTo is a runtime whose plugin logs go to w.
func pluginRuntimeLogTo(ctx context.Context, e *env, w io.Writer) (*plugin.Runtime, error) {
	opts := plugin.Options{
		Logger: slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	if dir := e.getenv("TOOLWARDEN_PLUGIN_CACHE"); dir != "" {
		opts.CacheDir = dir
	}
	return plugin.NewRuntime(ctx, opts)
}

// policyName names a policy after its file: builtin:argguard and
// argguard.wasm are both "argguard".
func policyName(file string) string {
	if name, ok := strings.CutPrefix(file, "builtin:"); ok {
		return name
	}
	base := file[strings.LastIndexAny(file, `/\`)+1:]
	return strings.TrimSuffix(base, ".wasm")
}

func runPluginTest(e *env, args []string) int {
	fs := newPluginFlags(e, "test")
	run := fs.String("run", "", "run only the cases whose name matches this regexp")
	verbose := fs.Bool("v", false, "print every case, not only failures")
	pos, code, ok := fs.parseInterleaved(args)
	if !ok {
		return code
	}
	if len(pos) < 2 {
		return fs.usageError("want PLUGIN and at least one CASES.json")
	}
	var err error
	var filter *regexp.Regexp
	if *run != "" {
		if filter, err = regexp.Compile(*run); err != nil {
			return fs.usageError("--run: %v", err)
		}
	}
	bin, err := readPlugin(pos[0])
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden plugin test:", err)
		return exitError
	}
	ctx := context.Background()
	rt, err := pluginRuntime(ctx, e)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden plugin test:", err)
		return exitError
	}
	defer rt.Close(ctx)

	pass, fail := 0, 0
	for _, path := range pos[1:] {
		f, err := plugintest.ReadFile(path)
		if err != nil {
			fmt.Fprintln(e.stderr, "toolwarden plugin test:", err)
			return exitError
		}
		results, err := f.Run(ctx, rt, bin, policyName(pos[0]), filter)
		if err != nil {
			fmt.Fprintf(e.stdout, "FAIL: %s: plugin refused: %v\n", path, err)
			fail++
			continue
		}
		for _, r := range results {
			took := r.Elapsed.Round(time.Microsecond)
			if len(r.Problems) == 0 {
				pass++
				if *verbose {
					fmt.Fprintf(e.stdout, "PASS: %s: %s (%s)\n", path, r.Name, took)
				}
				continue
			}
			fail++
			fmt.Fprintf(e.stdout, "FAIL: %s: %s (%s)\n", path, r.Name, took)
			for _, pr := range r.Problems {
				fmt.Fprintf(e.stdout, "  %s\n", pr)
			}
		}
	}
	fmt.Fprintln(e.stdout, strings.Repeat("-", 80))
	fmt.Fprintf(e.stdout, "PASS: %d/%d\n", pass, pass+fail)
	if fail > 0 {
		fmt.Fprintf(e.stdout, "FAIL: %d/%d\n", fail, pass+fail)
		return exitError
	}
	return exitOK
}

// hostDefaults are the host settings every command starts from: the
// engine's defaults, with toolwarden's first-party plugins built in.
func hostDefaults() host.Settings { return host.Defaults().WithBuiltins(plugins.Modules()) }
