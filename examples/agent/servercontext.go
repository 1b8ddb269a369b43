package main

import (
	"os"
	"sort"

	"github.com/toolwarden/toolwarden/host"
)

// stdioEnv is the environment the agent starts a stdio server with: its
// own, plus the server's env.
func stdioEnv(s *host.Server) []string {
	keys := make([]string, 0, len(s.Env))
	for k := range s.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	env := os.Environ()
	for _, k := range keys {
		env = append(env, k+"="+s.Env[k])
	}
	return env
}

// serverContext is what the calls to a stdio server the agent started are
// resolved against (its working directory, HOME and the folders on its
// command line, which server-filesystem serves), derived from what it
// was started with as the proxy and the hooks derive theirs.
func serverContext(s *host.Server) *host.ServerContext {
	wd, _ := os.Getwd()
	return host.StdioServerContext(s.Command, s.Args, stdioEnv(s), s.Cwd, wd)
}
