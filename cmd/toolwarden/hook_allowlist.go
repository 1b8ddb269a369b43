package main

import (
	"os"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/hook"
)

// admitAgentServer holds the server the agent will run under name to the
// allow-lists with the one judge tools sync uses too (cli.ServerJudge,
// cmd/internal/cli/serverjudge.go); this toolwarden is this very file.
func admitAgentServer(e *env, cfg *config.Config, agent hook.Agent, ev *hook.Event, name string, found *hook.Server) error {
	return hookJudge(e).Admit(cfg, agent, eventProject(ev), name, found)
}

func hookJudge(e *env) cli.ServerJudge {
	self, _ := os.Executable()
	return cli.ServerJudge{Getenv: e.getenv, Self: []string{self}}
}

func isThisToolwarden(path string) bool {
	self, _ := os.Executable()
	return cli.ServerJudge{Self: []string{self}}.IsToolwarden(path)
}

func resolveCommand(command, dir, path string) string { return cli.ResolveCommand(command, dir, path) }

func serverEnv(e *env, agent hook.Agent, spEnv []string, k string) string {
	return hookJudge(e).ServerEnv(agent, spEnv, k)
}

func serverDir(dir, project string) string { return cli.ServerDir(dir, project) }

// eventProject is the directory the agent runs in.
func eventProject(ev *hook.Event) string {
	if ev.Cwd != "" {
		return ev.Cwd
	}
	wd, _ := os.Getwd()
	return wd
}
