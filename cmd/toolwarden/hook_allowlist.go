package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/host/config"
	"github.com/toolwarden/toolwarden/sdk/hook"
)

// admitAgentServer holds the server the agent will run under name (found
// in its config) to the allow-lists, judging exactly what will run: the
// command with its arguments, the variables the agent's config sets for
// it, and its directory. This very toolwarden running wrap is judged by
// the command wrap's own parser finds; running proxy, by whether that
// proxy is held to the same requirements. A file merely named toolwarden
// is judged like any other command.
func admitAgentServer(e *env, cfg *config.Config, agent hook.Agent, ev *hook.Event, name string, found *hook.Server) error {
	sp := &found.Spec
	if sp.URL != "" {
		return cfg.AdmitServer(name, &config.Server{URL: sp.URL})
	}
	env := configuredEnv(e, sp.Env)
	dir := serverDir(sp.Dir, eventProject(ev))
	if len(sp.Args) > 0 && isThisToolwarden(resolveCommand(sp.Command, dir, serverEnv(e, agent, sp.Env, "PATH"))) {
		switch sp.Args[0] {
		case "wrap":
			return admitWrapped(cfg, name, sp.Args[1:], env, dir)
		case "proxy":
			return admitProxy(e, cfg, agent, name, sp.Args[1:], sp.Env, dir, env)
		}
	}
	return cfg.AdmitServer(name, &config.Server{Command: sp.Command, Args: sp.Args, Env: env, Cwd: dir})
}

// admitWrapped judges `toolwarden wrap ARGS` by the server wrap will run,
// as wrap's own parser reads ARGS; what wrap would refuse is refused.
func admitWrapped(cfg *config.Config, name string, args []string, env map[string]string, dir string) error {
	var why bytes.Buffer
	_, wf, _, ok := cli.ParseWrap(io.Discard, &why, cli.ServeDefaults{}, args)
	if !ok {
		return refuseServer(cfg, name, fmt.Sprintf("server %q runs toolwarden wrap with arguments wrap does not run a server with (%s)", name, strings.TrimSpace(why.String())))
	}
	return cfg.AdmitServer(name, &config.Server{Command: wf.Command[0], Args: wf.Command[1:], Env: env, Cwd: dir})
}

// admitProxy admits `toolwarden proxy ARGS` only when that proxy is bound
// to the requirements this hook holds: it loads the very same requirements
// files, so it disables every server they do not admit. Flags or
// variables that change which files it loads unbind it, and so does a
// variable that loads code into it.
func admitProxy(e *env, cfg *config.Config, agent hook.Agent, name string, args, spEnv []string, dir string, env map[string]string) error {
	var why bytes.Buffer
	_, pf, _, ok := cli.ParseProxy(io.Discard, &why, cli.ServeDefaults{}, args)
	if !ok {
		return refuseServer(cfg, name, fmt.Sprintf("server %q runs toolwarden proxy with arguments proxy does not run with (%s)", name, strings.TrimSpace(why.String())))
	}
	for _, k := range sortedEnvNames(env) {
		if config.LoadsCode(k) {
			return refuseServer(cfg, name, fmt.Sprintf("server %q runs toolwarden proxy with env %s set, which can make it run other code", name, k))
		}
	}
	hookDir, _ := os.Getwd()
	want := absolutePaths(cfg.RequirementsFiles(), hookDir)
	got := absolutePaths(config.RequirementsPaths(func(k string) string { return serverEnv(e, agent, spEnv, k) }, pf.Requirements...), dir)
	if !slices.Equal(got, want) {
		return refuseServer(cfg, name, fmt.Sprintf("server %q runs toolwarden proxy, which would load the requirements [%s] instead of this hook's [%s], so it is not held to the same server allow-lists (give it exactly this hook's requirements: the same --requirements flags and $%s)",
			name, strings.Join(got, ", "), strings.Join(want, ", "), config.RequirementsEnv))
	}
	return nil
}

// refuseServer disables the server, as a list that does not admit it
// would, and says why.
func refuseServer(cfg *config.Config, name, why string) error {
	// No list admits a server without a command or URL: this disables it.
	_ = cfg.AdmitServer(name, &config.Server{})
	return fmt.Errorf("%s (required by %s)", why, strings.Join(cfg.ServerAllowListFiles(), ", "))
}

// isThisToolwarden reports whether path is this very program: the same
// file once symlinks are followed, or a file with the same bytes (another
// copy of this build). A file's name proves nothing: anyone can call a
// script toolwarden. The one place that says what toolwarden is.
func isThisToolwarden(path string) bool {
	self, err := os.Executable()
	if path == "" || err != nil {
		return false
	}
	a, errA := os.Stat(path)
	b, errB := os.Stat(self)
	if errA != nil || errB != nil || !a.Mode().IsRegular() {
		return false
	}
	if os.SameFile(a, b) {
		return true
	}
	return a.Size() == b.Size() && sameBytes(path, self)
}

// sameBytes compares two files a block at a time, stopping at the first
// difference, without holding either in memory.
func sameBytes(p, q string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	g, err := os.Open(q)
	if err != nil {
		return false
	}
	defer g.Close()
	x, y := make([]byte, 256<<10), make([]byte, 256<<10)
	for {
		n, errF := io.ReadFull(f, x)
		m, errG := io.ReadFull(g, y)
		if n != m || !bytes.Equal(x[:n], y[:m]) {
			return false
		}
		if errF != nil || errG != nil {
			// Both ended together (a short last block) or a read failed.
			return (errF == io.EOF || errF == io.ErrUnexpectedEOF) && errF == errG
		}
	}
}

// resolveCommand finds the file the agent runs for command, as an agent
// (Node's and Rust's process spawning alike) finds it: a path with a
// directory part from the server's directory, a bare name on the PATH the
// server gets, whose relative entries are taken from that directory too.
// "" when there is none.
func resolveCommand(command, dir, path string) string {
	if strings.ContainsAny(command, `/\`) {
		if !filepath.IsAbs(command) {
			command = filepath.Join(dir, command)
		}
		return command
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// configuredEnv is what the agent's config sets for the server: the
// variables of its environment whose values differ from the agent's own
// (this hook's), which the agent's user set before starting it.
func configuredEnv(e *env, spEnv []string) map[string]string {
	out := map[string]string{}
	for _, kv := range spEnv {
		k, v, _ := strings.Cut(kv, "=")
		if k != "" && e.getenv(k) != v {
			out[k] = v
		}
	}
	return out
}

// serverEnv is the value of k in the server's environment: the agent's
// config's, else the agent's own, which Claude Code and Gemini CLI pass
// on, and Codex does not (its servers' environments are complete).
func serverEnv(e *env, agent hook.Agent, spEnv []string, k string) string {
	for i := len(spEnv) - 1; i >= 0; i-- {
		if name, v, _ := strings.Cut(spEnv[i], "="); name == k {
			return v
		}
	}
	if agent == hook.Codex && spEnv != nil {
		return ""
	}
	return e.getenv(k)
}

// serverDir is the absolute directory the server starts in: its own, from
// the project's when relative, else the project's.
func serverDir(dir, project string) string {
	switch {
	case dir == "":
		return project
	case filepath.IsAbs(dir):
		return filepath.Clean(dir)
	}
	return filepath.Join(project, dir)
}

// eventProject is the directory the agent runs in.
func eventProject(ev *hook.Event) string {
	if ev.Cwd != "" {
		return ev.Cwd
	}
	wd, _ := os.Getwd()
	return wd
}

func absolutePaths(paths []string, dir string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		out[i] = filepath.Clean(p)
	}
	return out
}

func sortedEnvNames(env map[string]string) []string {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}
