package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hook"
	"github.com/toolwarden/toolwarden/internal/policy"
)

// SyncAgentServers is what `toolwarden tools sync` starts for agent: the
// servers it really runs (hook.Places.RunningServers, Resolve's layering),
// not every definition its files hold. A name the agent does not run is
// reported on w and left out; one whose server cannot be told is an error.
func SyncAgentServers(w io.Writer, places hook.Places, agent hook.Agent) ([]hook.Server, []error) {
	named, errs := places.RunningServers(agent)
	var out []hook.Server
	for _, n := range named {
		switch n.Outcome {
		case hook.Runs:
			out = append(out, n.Server)
		case hook.Unsure:
			errs = append(errs, fmt.Errorf("server %q: %s", n.Name, n.Why))
		default:
			fmt.Fprintf(w, "skip %s: %s does not run it: %s\n", policy.OneLine(n.Name), agent, policy.OneLine(n.Why))
		}
	}
	return out, errs
}

// AdmitToSync holds every server to the admin's server allow-lists (the
// requirements in force: the system files and $TOOLWARDEN_REQUIREMENTS)
// with the hook's own judge, ServerJudge, before tools sync starts it: a
// server the hook would refuse is never started, and w says why and which
// requirements file refused it. Requirements that cannot be read refuse
// them all (fail closed). A server whose config cannot be read (Err) is
// passed on: it is never started either, and tools sync reports it.
func AdmitToSync(w io.Writer, getenv func(string) string, project string, servers []hook.Server) ([]hook.Server, error) {
	// The requirements alone: the allow-lists live there, and a user
	// config that does not load must not stop tools sync.
	cfg, err := config.LoadWithRequirements(config.RequirementsPaths(getenv))
	if err != nil {
		return nil, fmt.Errorf("no server started: the requirements cannot be read (%v); fix them, since their server allow-lists decide which servers may run", err)
	}
	if !cfg.HasServerAllowLists() {
		return servers, nil
	}
	judge := ServerJudge{Getenv: getenv, Self: syncSelf()}
	var admitted []hook.Server
	for _, s := range servers {
		if s.Err == nil {
			if err := judge.Admit(cfg, s.Agent, project, s.Name, &s); err != nil {
				fmt.Fprintf(w, "refuse %s: not started: %s\n", policy.OneLine(s.Name), policy.OneLine(err.Error()))
				fmt.Fprintf(w, "     from %s\n", policy.OneLine(s.Source))
				continue
			}
		}
		admitted = append(admitted, s)
	}
	return admitted, nil
}

// syncSelf is the file that is this toolwarden for tools sync: this
// program, which runs the hook, wrap and proxy alike.
func syncSelf() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return []string{exe}
}
