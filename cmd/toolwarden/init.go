package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hook"
)

func init() {
	register(command{name: "init", summary: "write a starter config and put your agents' MCP servers behind toolwarden", run: runInit})
}

type initFlags struct {
	config      string
	project     string
	force       bool
	writeAgents bool
	dryRun      bool
}

func runInit(e *env, args []string) int {
	fs := newCmdFlags(e, "init", "init [--config PATH] [--write-agents] [--dry-run] [--force] [--project DIR]",
		`Writes a commented starter config (destructive and open-world tools asked,
read-only tools run, the trifecta and argguard plugins on) and finds the MCP
servers of Claude Code (.mcp.json, ~/.claude.json), Codex (~/.codex/config.toml)
and Gemini CLI (~/.gemini/settings.json, .gemini/settings.json). It shows, as a
diff, how each entry would run through "toolwarden wrap", and changes those
files only with --write-agents, after a backup. An existing config is kept
unless --force. Running it again changes nothing.

Exit: 0 done, 1 a file could not be read or written (named with file:line:col).`)
	var f initFlags
	fs.StringVar(&f.config, "config", "", "where to write the config (default: "+displayInitConfigPath(e)+")")
	fs.StringVar(&f.project, "project", "", "the project folder whose .mcp.json and .gemini/settings.json are read (default: the current folder)")
	fs.BoolVar(&f.force, "force", false, "replace an existing config (the old one is kept as a backup)")
	fs.BoolVar(&f.writeAgents, "write-agents", false, "rewrite the agents' MCP server entries to run through toolwarden wrap (a backup of each file is kept)")
	fs.BoolVar(&f.writeAgents, "rewrite", false, "same as --write-agents")
	fs.BoolVar(&f.dryRun, "dry-run", false, "write nothing; show what would be written")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if code, ok := fs.noArgs(""); !ok {
		return code
	}
	if err := f.resolve(e); err != nil {
		fmt.Fprintln(e.stderr, "toolwarden init:", err)
		return exitError
	}
	return f.run(e)
}

// resolve fills in the default config path and project folder, both made
// absolute: the agents' rewritten entries must work from any folder.
func (f *initFlags) resolve(e *env) error {
	var err error
	if f.config == "" {
		if f.config, err = initConfigPath(e); err != nil {
			return err
		}
	}
	if f.config, err = filepath.Abs(expandUserHome(e, f.config)); err != nil {
		return err
	}
	if f.project == "" {
		if f.project, err = os.Getwd(); err != nil {
			return err
		}
	}
	f.project, err = filepath.Abs(f.project)
	return err
}

func (f *initFlags) run(e *env) int {
	home := e.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	failed := false

	// 1. The agents' files, read before anything is written.
	var found []*agentFile
	for _, loc := range agentLocations(hook.Places{Home: home, Project: f.project, Getenv: e.getenv}) {
		af, err := readAgentFile(loc.agent, loc.path, loc.format)
		if err != nil {
			fmt.Fprintln(e.stderr, "toolwarden init:", err)
			failed = true
			continue
		}
		if af != nil && len(af.servers) > 0 {
			found = append(found, af)
		}
	}

	// 2. The config.
	if f.writeConfig(e, found) != nil {
		return exitError
	}

	// 3. The agents' entries.
	if len(found) == 0 {
		fmt.Fprintln(e.stdout, "\nNo MCP servers found in Claude Code, Codex or Gemini CLI configs. Put a server behind toolwarden with:")
		fmt.Fprintf(e.stdout, "  toolwarden wrap --app NAME --config %s -- COMMAND ARGS...\n", shellQuote(f.config))
	}
	tw := toolwardenCommand(e)
	if len(found) > 0 && filepath.IsAbs(tw) {
		fmt.Fprintf(e.stdout, "\nThe wrapped entries run %s: a full path, since an agent started from a desktop launcher may not have your terminal's PATH.\n", shellQuote(tw))
	}
	pending := false
	for _, af := range found {
		p, ok := f.wrapAgentFile(e, af, tw)
		pending = pending || p
		failed = failed || !ok
	}
	switch {
	case pending && f.dryRun:
		fmt.Fprintln(e.stdout, "\n--dry-run: nothing was written.")
	case pending:
		fmt.Fprintln(e.stdout, "\nThe agents' files above were not changed. To make these changes (a backup of each file is kept):")
		fmt.Fprintf(e.stdout, "  toolwarden init --write-agents%s\n", f.flagsForRerun())
	case len(found) > 0 && f.writeAgents && !failed:
		fmt.Fprintln(e.stdout, "\nRestart your agents (or reload their MCP servers) to use the wrapped servers.")
	}
	// A toolwarden hook Codex does not trust decides nothing (codex_trust.go).
	codexHookReport(e, f.project, e.stdout, e.stdout)
	if failed {
		return exitError
	}
	return exitOK
}

// wrapAgentFile lists one agent file's servers, shows the diff that puts
// them behind toolwarden wrap (tw) and writes it when asked. pending is
// true when a change was shown but not written; ok is false on an error,
// which is reported.
func (f *initFlags) wrapAgentFile(e *env, af *agentFile, tw string) (pending, ok bool) {
	fmt.Fprintf(e.stdout, "\n%s: %s\n", af.agent, af.path)
	for _, s := range af.servers {
		fmt.Fprintf(e.stdout, "  %-16s %s%s\n", s.name, displayCommand(s), serverNote(af, s))
	}
	out, changed, err := af.rewrite(tw, f.config)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden init:", err)
		return false, false
	}
	if len(changed) == 0 {
		return false, true
	}
	fmt.Fprint(e.stdout, unifiedDiff(af.path, af.src, out))
	if cs := af.wrapConfigs(f.config); len(cs) > 1 {
		fmt.Fprintf(e.stdout, "%s's servers read both %s and %s, in that order: the [apps.*] and [mcp_servers.*] rules you keep in %s still apply, and win where both files set a key.\n",
			af.agent, shellQuote(cs[0]), shellQuote(cs[1]), shellQuote(cs[1]))
	}
	if !f.writeAgents || f.dryRun {
		return true, true
	}
	backup, err := writeWithBackup(af.path, af.src, out, af.mode)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden init:", err)
		return false, false
	}
	fmt.Fprintf(e.stdout, "wrote %s (%d server(s) now run through toolwarden wrap; the old file is %s)\n", af.path, len(changed), backup)
	return false, true
}

// serverNote says why a server of af is not (re)wrapped, "" when it will be.
func serverNote(af *agentFile, s agentServer) string {
	switch {
	case s.wrapped && af.agent == "Codex" && !readsConfig(s.args, af.path):
		// An entry an older init wrote: Codex's own rules do not count
		// for it, which the user would not guess.
		return fmt.Sprintf(" (already behind toolwarden, but it does not read this file, so its [apps.*] rules do not count: add \"--config\", %s after its other --config)", tomlString(af.path))
	case s.wrapped:
		return " (already behind toolwarden)"
	case s.remote:
		return " (not wrapped: toolwarden wrap runs stdio servers)"
	case s.unknown != "":
		return " (not wrapped: " + s.unknown + ")"
	}
	return ""
}

// readsConfig reports whether wrap args name path with --config.
func readsConfig(args []string, path string) bool {
	for i := 0; i+1 < len(args) && args[i] != "--"; i++ {
		if args[i] == "--config" && args[i+1] == path || args[i] == "--config="+path {
			return true
		}
	}
	return false
}

// writeConfig writes the starter config unless one exists (then --force
// replaces it after a backup). It validates what it writes.
func (f *initFlags) writeConfig(e *env, found []*agentFile) error {
	text := starterConfig(f.config, found, time.Now())
	if _, err := config.LoadBytes(f.config, []byte(text)); err != nil {
		fmt.Fprintln(e.stderr, "toolwarden init: the starter config does not validate (please report this):", err)
		return err
	}
	old, err := os.ReadFile(f.config)
	exists := err == nil
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		fmt.Fprintln(e.stderr, "toolwarden init:", err)
		return err
	case exists && !f.force:
		fmt.Fprintf(e.stdout, "config: %s exists; keeping it (--force replaces it, keeping a backup)\n", f.config)
		return nil
	case f.dryRun:
		fmt.Fprintf(e.stdout, "config: would write %s (--dry-run)\n", f.config)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(f.config), 0o700); err != nil {
		fmt.Fprintln(e.stderr, "toolwarden init:", err)
		return err
	}
	backup, err := writeWithBackup(f.config, old, []byte(text), 0o600)
	if err != nil {
		fmt.Fprintln(e.stderr, "toolwarden init:", err)
		return err
	}
	if exists {
		fmt.Fprintf(e.stdout, "config: wrote %s (the old one is %s)\n", f.config, backup)
	} else {
		fmt.Fprintf(e.stdout, "config: wrote %s\n", f.config)
	}
	if discovered, err := initConfigPath(e); err == nil && discovered == f.config {
		fmt.Fprintln(e.stdout, "  every command reads it when given no --config; check it with: toolwarden validate")
	} else {
		fmt.Fprintf(e.stdout, "  check it with: toolwarden validate --config %s\n", shellQuote(f.config))
	}
	return nil
}

func (f *initFlags) flagsForRerun() string {
	s := ""
	if f.config != "" {
		s += " --config " + shellQuote(f.config)
	}
	return s
}

// writeWithBackup replaces path with data: old (what was read) is first
// copied to a fresh path.bak[.N], and the file is replaced atomically. It
// refuses when the file changed since it was read (an agent writing its
// own config meanwhile). A symlinked file is written where it points.
// It returns the backup's path ("" when there was no file).
func writeWithBackup(path string, old, data []byte, mode fs.FileMode) (string, error) {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	now, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if exists != (old != nil) || exists && !bytes.Equal(now, old) {
		return "", fmt.Errorf("%s changed while init was running; nothing was written to it, run init again", path)
	}
	backup := ""
	if exists {
		for i := 0; ; i++ {
			backup = path + ".bak"
			if i > 0 {
				backup += "." + strconv.Itoa(i)
			}
			bf, err := os.OpenFile(backup, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				return "", fmt.Errorf("backing up %s: %w", path, err)
			}
			_, werr := bf.Write(old)
			if cerr := bf.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				return "", fmt.Errorf("backing up %s: %w", path, werr)
			}
			break
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".toolwarden-*")
	if err != nil {
		return backup, err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return backup, err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return backup, err
	}
	if err := tmp.Close(); err != nil {
		return backup, err
	}
	return backup, os.Rename(tmp.Name(), path)
}

// initConfigPath is where init writes the config by default: the user
// config folder that also holds approvals.json.
func initConfigPath(e *env) (string, error) {
	dir, err := config.UserConfigDir(e.getenv)
	if err != nil {
		return "", fmt.Errorf("no user config folder (%w); pass --config", err)
	}
	return filepath.Join(dir, "toolwarden", "config.toml"), nil
}

func displayInitConfigPath(e *env) string {
	p, err := initConfigPath(e)
	if err != nil {
		return "<user config dir>/toolwarden/config.toml"
	}
	return p
}

// expandUserHome is "~/..." with the home of the command's env.
func expandUserHome(e *env, p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h := e.getenv("HOME"); h != "" {
			return filepath.Join(h, p[1:])
		}
	}
	return p
}

// toolwardenCommand is what the rewritten entries run: an absolute path,
// since an agent started from a desktop launcher may not have the
// terminal's PATH (~/go/bin, /opt/homebrew/bin). When "toolwarden" on
// PATH is this binary, that PATH entry (not the file it links to), so
// that an upgrade that replaces the file or moves the link still runs;
// else this executable's own path, symlinks resolved. A "go run" build
// vanishes when it exits, so then the bare name, with a warning.
func toolwardenCommand(e *env) string {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(e.stderr, "toolwarden init: cannot tell where this program is (%v); the entries name \"toolwarden\", which an agent finds only on its PATH\n", err)
		return "toolwarden"
	}
	if onPath, err := lookPath(e, "toolwarden"); err == nil && sameFile(onPath, self) {
		if abs, err := filepath.Abs(onPath); err == nil {
			return abs
		}
	}
	if strings.Contains(self, string(filepath.Separator)+"go-build") {
		fmt.Fprintln(e.stderr, "toolwarden init: running from \"go run\"; the entries name \"toolwarden\", so install it on PATH (go install ./cmd/toolwarden)")
		return "toolwarden"
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	return self
}

// lookPath is exec.LookPath over the command's PATH.
func lookPath(e *env, name string) (string, error) {
	path := e.getenv("PATH")
	if path == "" {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// shellQuote quotes a path for a command line shown to the user.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
