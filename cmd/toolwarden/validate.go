package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/plugins"
)

func init() {
	register(command{name: "validate", summary: "check config files and load their plugins; report errors and warnings", run: runValidate})
}

// runValidate loads the layers as every other command would, compiles the
// rules and loads every enabled plugin, and prints what is wrong, errors
// first, one per line (warnings prefixed "warning: "), then a one-line
// summary on success. Exit 1 on any error; warnings alone exit 0, since the
// config loads and means what Codex means.
func runValidate(e *env, args []string) int {
	fs := newCmdFlags(e, "validate", "validate [--config F]...",
		`Loads the config files as layers, as wrap, proxy, check and hook do, compiles the
rules, and compiles and describes every enabled [policies.<name>] plugin (with the
plugin's config, so a config the plugin refuses is caught here). Reports errors and
warnings as file:line:col, errors first, on stderr; "ok: ..." on stdout when the
config is usable. A plugin that does not load is an error: the others would answer
every call with its on_error verdict (deny unless set).

With no --config, checks what every command reads then: the system file
($TOOLWARDEN_SYSTEM_CONFIG_DIR or /etc/toolwarden, config.toml) and the user file
(<user config dir>/toolwarden/config.toml, the one init writes), each when it
exists, or else the embedded default; it first lists each file looked for and
whether it is present.
Exit: 0 valid (warnings alone included), 1 errors, 2 bad usage.`)
	var configs stringList
	fs.Var(&configs, "config", "config file (repeatable; later files override earlier; default: the system and user config.toml that exist)")
	var reqs stringList
	fs.Var(&reqs, "requirements", "requirements file an admin sets (repeatable; with /etc/codex/requirements.toml, /etc/toolwarden/requirements.toml and $TOOLWARDEN_REQUIREMENTS)")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if code, ok := fs.noArgs("give config files with --config"); !ok {
		return code
	}

	if len(configs) == 0 {
		configs = listDiscovered(e, reqs)
	}
	cfg, err := config.LoadWithRequirements(config.RequirementsPaths(e.getenv, reqs...), configs...)
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
	var errs []string
	if _, err := policy.Compile(cfg); err != nil {
		errs = append(errs, fmt.Sprintf("toolwarden validate: the rules do not compile: %v", err))
	}
	for _, d := range loadPolicies(context.Background(), e, cfg) {
		errs = append(errs, d.String())
	}
	for _, s := range errs {
		fmt.Fprintln(e.stderr, s)
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintln(e.stderr, w.String())
	}
	if w := cfg.Webhook; w != nil && w.SecretEnv != "" && e.getenv(w.SecretEnv) == "" {
		// The secret is read at send time; without it nothing is sent.
		d := config.Diagnostic{Pos: w.Pos, Path: "webhook.secret_env", Severity: config.SeverityWarning,
			Message: fmt.Sprintf("$%s is not set here, and the webhook sends nothing without its secret: set it in the environment the agent starts toolwarden in", w.SecretEnv)}
		fmt.Fprintln(e.stderr, d.String())
	}
	// A toolwarden hook Codex does not run decides nothing (codex_trust.go).
	codexHookReport(e, workingDir(), e.stdout, e.stderr)
	if len(errs) > 0 {
		return exitError
	}
	if len(cfg.Overrides) > 0 {
		fmt.Fprintln(e.stdout, "overridden by requirements:")
		for _, o := range cfg.Overrides {
			fmt.Fprintln(e.stdout, "  "+o.String())
		}
	}
	fmt.Fprintf(e.stdout, "ok: %d file(s), %d apps, %d servers, %d policies\n",
		len(configs), len(cfg.Apps), len(cfg.Servers), len(cfg.Policies))
	return exitOK
}

// listDiscovered prints the files read without --config (each one looked
// for, present or not, and the requirements in force) and returns the
// present ones, in layer order.
func listDiscovered(e *env, reqs []string) []string {
	fmt.Fprintln(e.stdout, "config files (no --config given; later ones override earlier):")
	var present []string
	for _, p := range config.Discover(e.getenv) {
		switch {
		case p.Path == "":
			fmt.Fprintf(e.stdout, "  %-12s  unknown: %s\n", p.Role, p.Why)
		case p.Present:
			fmt.Fprintf(e.stdout, "  %-12s  %s\n", p.Role, p.Path)
			present = append(present, p.Path)
		default:
			fmt.Fprintf(e.stdout, "  %-12s  %s (not present)\n", p.Role, p.Path)
		}
	}
	if len(present) == 0 {
		fmt.Fprintln(e.stdout, "  none is present: the embedded default is in force (\"toolwarden init\" writes the user file)")
	}
	for _, r := range config.RequirementsPaths(e.getenv, reqs...) {
		fmt.Fprintf(e.stdout, "  %-12s  %s\n", "requirements", r)
	}
	return present
}

// loadPolicies loads every enabled [policies.*] plugin as a host would
// (read or resolve the module, check its ABI, compile it through the disk
// cache, instantiate it and send describe with its config) and returns an
// error at the policy's [policies.<name>] entry for each that fails.
// TOOLWARDEN_PLUGIN_CACHE names the compile cache, as for toolwarden plugin.
func loadPolicies(ctx context.Context, e *env, cfg *config.Config) []config.Diagnostic {
	var enabled []*config.Policy
	for _, p := range cfg.Policies {
		if config.Bool(p.Enabled, true) {
			enabled = append(enabled, p)
		}
	}
	if len(enabled) == 0 {
		return nil
	}
	// A plugin's own log lines are not diagnostics; its load error is.
	opts := plugin.Options{Logger: slog.New(slog.DiscardHandler), CacheDir: e.getenv("TOOLWARDEN_PLUGIN_CACHE")}
	rt, err := plugin.NewRuntime(ctx, opts)
	if err != nil {
		return []config.Diagnostic{{Pos: enabled[0].Pos, Path: "policies", Message: fmt.Sprintf("cannot start the plugin runtime: %v", err)}}
	}
	defer rt.Close(ctx)
	var out []config.Diagnostic
	for _, p := range enabled {
		// A data file's problem is reported at the data key, pointing into
		// the data file itself, rather than as a plugin that does not load.
		if _, err := plugin.ReadData(p.Data); err != nil {
			out = append(out, config.Diagnostic{Pos: p.DataPos, Path: "policies." + tomlKey(p.Name) + ".data", Message: err.Error()})
			continue
		}
		if _, err := plugin.Load(ctx, rt, p, plugins.Modules()); err != nil {
			msg := err.Error()
			if f := (*plugin.Fault)(nil); errors.As(err, &f) {
				msg = f.Msg // without the `plugin "<name>": ` the path already says
			}
			out = append(out, config.Diagnostic{
				Pos:     p.Pos,
				Path:    "policies." + tomlKey(p.Name),
				Message: fmt.Sprintf("plugin does not load: %s; until it does, it answers every call it covers with its on_error verdict", msg),
			})
		}
	}
	return out
}

// bareKey is compiled on first use, not at every process start.
var bareKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

// tomlKey writes a key as TOML (and the config's diagnostics) would.
func tomlKey(k string) string {
	if bareKey().MatchString(k) {
		return k
	}
	return strconv.Quote(k)
}
