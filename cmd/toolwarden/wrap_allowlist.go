package main

import (
	"os"
	"strings"

	"github.com/toolwarden/toolwarden/internal/config"
)

// wrapServer is the server wrap runs, as the allow-lists judge it: the
// command and its arguments, the directory it starts in (wrap's own), and
// the environment it inherits from wrap, which is the agent's: wrap cannot
// tell a variable the agent's config set for this server (NODE_OPTIONS =
// --require evil.js) from one of the agent's own, so every variable that
// loads code is judged. PATH is left out: it is the agent's, wrap finds
// the command on it as the agent found wrap, and a PATH an agent's config
// sets is judged by the hook, which sees that config.
func wrapServer(command []string) *config.Server {
	s := &config.Server{Command: command[0], Args: command[1:], Env: map[string]string{}}
	s.Cwd, _ = os.Getwd()
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if k != "" && !strings.EqualFold(k, "PATH") {
			s.Env[k] = v
		}
	}
	return s
}
