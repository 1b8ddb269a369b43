package main

import (
	"os"
	"sort"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/serverspec"
)

// stdioSpec is how the agent starts a stdio server: its command and args,
// the agent's environment plus the server's env, in its cwd (relative to
// the agent's).
func stdioSpec(s *config.Server) serverspec.Spec {
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := os.Environ()
	for _, k := range keys {
		env = append(env, k+"="+s.Env[k])
	}
	return serverspec.Spec{Name: s.Name, Command: s.Command, Args: s.Args, Env: env, Dir: s.Cwd}
}

// serverContext is what the calls to a stdio server the agent started are
// resolved against (its working directory, HOME and the folders on its
// command line, which server-filesystem serves), derived from the spec it
// was started with as the proxy and the hooks derive theirs.
func serverContext(s *config.Server) *host.ServerContext {
	wd, _ := os.Getwd()
	return stdioSpec(s).ServerContext(wd)
}
