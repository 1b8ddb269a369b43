package main

import (
	"io"
	"os"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/internal/hook"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// resolveHookServer finds the one server the event's agent runs under the
// event's server name, as the agent finds it: in its config under the
// user's home and the folder it runs in, read through the hook's own
// environment, which is the agent's. The server is as its entry gives it
// (its own variables only), which is what the allow-lists judge; the
// catalog identity adds the environment it inherits (hookTarget). An event
// that is not an MCP call has no server.
func resolveHookServer(e *env, agent hook.Agent, ev *hook.Event) hook.Resolution {
	if !ev.MCP {
		return hook.Resolution{}
	}
	home := e.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return hook.Places{Home: home, Project: eventProject(ev), Getenv: e.getenv}.Resolve(agent, ev.Server)
}

// hookTarget is the server the event's call goes to, for the catalog: the
// identity of runs, the one server the agent runs under the event's server
// name, started with the environment it inherits, or why there is none to
// trust an entry for. Without a catalog (dir "") there is nothing to look
// up.
func hookTarget(e *env, ev *hook.Event, dir string, runs hook.Resolution) hook.Target {
	if !ev.MCP || dir == "" {
		return hook.Target{}
	}
	if runs.Outcome != hook.Runs {
		return hook.Target{Why: runs.Why}
	}
	s := runs.Server
	s.Spec = hook.Inherit(s.Spec, os.Environ())
	return hook.Target{Identity: runIdentity(e, ev, s)}
}

// runIdentity is the identity of the server whose tools answer when s is
// started: for this very toolwarden running wrap, the server wrap's own
// parser finds after its flags (in the same folder, with the same
// environment), since wrap writes the catalog under that identity; for
// anything else, s itself. A file merely named toolwarden is not
// unwrapped: it may run anything.
func runIdentity(e *env, ev *hook.Event, s hook.Server) serverspec.Identity {
	sp := s.Spec
	if sp.URL == "" && len(sp.Args) > 0 && sp.Args[0] == "wrap" {
		dir := serverDir(sp.Dir, eventProject(ev))
		if isThisToolwarden(resolveCommand(sp.Command, dir, serverEnv(e, ev.Agent, sp.Env, "PATH"))) { // hook_allowlist.go
			if _, wf, _, ok := cli.ParseWrap(io.Discard, io.Discard, cli.ServeDefaults{}, sp.Args[1:]); ok {
				sp.Command, sp.Args = wf.Command[0], wf.Command[1:]
			}
		}
	}
	return sp.Identity()
}
