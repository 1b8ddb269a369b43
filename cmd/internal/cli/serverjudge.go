package cli

import (
	"bytes"
	"fmt"
	"github.com/toolwarden/toolwarden/internal/serverspec"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hook"
)

// ServerJudge holds an agent's server to an admin's server allow-lists.
// It is the one judge of "may this agent's server run": the hook asks it
// before deciding a call, and `toolwarden tools sync` asks it before it
// starts a server to list its tools, so neither runs what the other
// refuses.
type ServerJudge struct {
	// Getenv is the environment of the process judging (the agent's, for
	// a hook), which the agent's servers inherit.
	Getenv func(string) string
	// Self are the files that are this toolwarden (the one whose wrap and
	// proxy a server's command may run); see IsToolwarden.
	Self []string
	// Dir is the folder the judge's own relative requirements paths are
	// taken from ("" is the current folder).
	Dir string
}

// Admit holds the server the agent will run under name (found in its
// config, started in project unless it names its own folder) to the
// allow-lists, judging exactly what will run: the command with its
// arguments, the variables the agent's config sets for it, and its
// directory. This very toolwarden running wrap is judged by the command
// wrap's own parser finds; running proxy, by whether that proxy is held to
// the same requirements. A file merely named toolwarden is judged like any
// other command. A refused server is disabled in cfg; the error says why
// and which requirements file refused it.
func (j ServerJudge) Admit(cfg *config.Config, agent hook.Agent, project, name string, found *hook.Server) error {
	sp := &found.Spec
	if sp.URL != "" {
		return cfg.AdmitServer(name, &config.Server{URL: sp.URL})
	}
	env := j.configuredEnv(sp.Env)
	dir := ServerDir(sp.Dir, project)
	if len(sp.Args) > 0 && j.IsToolwarden(ResolveCommand(sp.Command, dir, j.ServerEnv(agent, sp.Env, "PATH"))) {
		switch sp.Args[0] {
		case "wrap":
			return admitWrapped(cfg, name, sp.Args[1:], env, dir)
		case "proxy":
			return j.admitProxy(cfg, agent, name, sp.Args[1:], sp.Env, dir, env)
		}
	}
	return cfg.AdmitServer(name, &config.Server{Command: sp.Command, Args: sp.Args, Env: env, Cwd: dir})
}

// admitWrapped judges `toolwarden wrap ARGS` by the server wrap will run,
// as wrap's own parser reads ARGS; what wrap would refuse is refused.
func admitWrapped(cfg *config.Config, name string, args []string, env map[string]string, dir string) error {
	var why bytes.Buffer
	_, wf, _, ok := ParseWrap(io.Discard, &why, ServeDefaults{}, args)
	if !ok {
		return refuseServer(cfg, name, fmt.Sprintf("server %q runs toolwarden wrap with arguments wrap does not run a server with (%s)", name, strings.TrimSpace(why.String())))
	}
	return cfg.AdmitServer(name, &config.Server{Command: wf.Command[0], Args: wf.Command[1:], Env: env, Cwd: dir})
}

// admitProxy admits `toolwarden proxy ARGS` only when that proxy is bound
// to the requirements this judge holds: it loads the very same
// requirements files, so it disables every server they do not admit.
// Flags or variables that change which files it loads unbind it, and so
// does a variable that loads code into it.
func (j ServerJudge) admitProxy(cfg *config.Config, agent hook.Agent, name string, args, spEnv []string, dir string, env map[string]string) error {
	var why bytes.Buffer
	_, pf, _, ok := ParseProxy(io.Discard, &why, ServeDefaults{}, args)
	if !ok {
		return refuseServer(cfg, name, fmt.Sprintf("server %q runs toolwarden proxy with arguments proxy does not run with (%s)", name, strings.TrimSpace(why.String())))
	}
	for _, k := range sortedEnvNames(env) {
		if config.LoadsCode(k) {
			return refuseServer(cfg, name, fmt.Sprintf("server %q runs toolwarden proxy with env %s set, which can make it run other code", name, k))
		}
	}
	ownDir := j.Dir
	if ownDir == "" {
		ownDir, _ = os.Getwd()
	}
	want := absolutePaths(cfg.RequirementsFiles(), ownDir)
	got := absolutePaths(config.RequirementsPaths(func(k string) string { return j.ServerEnv(agent, spEnv, k) }, pf.Requirements...), dir)
	if !slices.Equal(got, want) {
		return refuseServer(cfg, name, fmt.Sprintf("server %q runs toolwarden proxy, which would load the requirements [%s] instead of this hook's [%s], so it is not held to the same server allow-lists (give it exactly this hook's requirements: the same --requirements flags and $%s)",
			name, strings.Join(got, ", "), strings.Join(want, ", "), config.RequirementsEnv))
	}
	return nil
}

// RefuseUnresolved disables a server whose command cannot be told (the
// agent does not run it under the name, or its config cannot be read):
// no allow-list admits what it cannot see.
func RefuseUnresolved(cfg *config.Config, name, why string) error {
	return refuseServer(cfg, name, fmt.Sprintf("server %q cannot be checked against the server allow-list: %s", name, why))
}

// refuseServer disables the server, as a list that does not admit it
// would, and says why.
func refuseServer(cfg *config.Config, name, why string) error {
	// No list admits a server without a command or URL: this disables it.
	_ = cfg.AdmitServer(name, &config.Server{})
	return fmt.Errorf("%s (required by %s)", why, strings.Join(cfg.ServerAllowListFiles(), ", "))
}

// IsToolwarden reports whether path is one of j.Self: the same file once
// symlinks are followed, or a file with the same bytes (another copy of
// this build). A file's name proves nothing: anyone can call a script
// toolwarden. The one place that says what toolwarden is.
func (j ServerJudge) IsToolwarden(path string) bool {
	if path == "" {
		return false
	}
	a, err := os.Stat(path)
	if err != nil || !a.Mode().IsRegular() {
		return false
	}
	for _, self := range j.Self {
		b, err := os.Stat(self)
		if err != nil {
			continue
		}
		if os.SameFile(a, b) || a.Size() == b.Size() && sameBytes(path, self) {
			return true
		}
	}
	return false
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

// ResolveCommand is the file the agent runs for command, started in dir
// with PATH path (serverspec.LookPath), or "" when there is none.
func ResolveCommand(command, dir, path string) string {
	if file, found := serverspec.LookPath(command, dir, path); found {
		return file
	}
	return ""
}

// configuredEnv is what the agent's config sets for the server: the
// variables of its environment whose values differ from the agent's own
// (the judge's), which the agent's user set before starting it.
func (j ServerJudge) configuredEnv(spEnv []string) map[string]string {
	out := map[string]string{}
	for _, kv := range spEnv {
		k, v, _ := strings.Cut(kv, "=")
		if k != "" && j.Getenv(k) != v {
			out[k] = v
		}
	}
	return out
}

// ServerEnv is the value of k in the server's environment: the agent's
// config's, else the agent's own, which Claude Code and Gemini CLI pass
// on, and Codex does not (its servers' environments are complete).
func (j ServerJudge) ServerEnv(agent hook.Agent, spEnv []string, k string) string {
	for i := len(spEnv) - 1; i >= 0; i-- {
		if name, v, _ := strings.Cut(spEnv[i], "="); name == k {
			return v
		}
	}
	if agent == hook.Codex && spEnv != nil {
		return ""
	}
	return j.Getenv(k)
}

// ServerDir is the absolute directory the server starts in: its own, from
// the project's when relative, else the project's.
func ServerDir(dir, project string) string {
	switch {
	case dir == "":
		return project
	case filepath.IsAbs(dir):
		return filepath.Clean(dir)
	}
	return filepath.Join(project, dir)
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
