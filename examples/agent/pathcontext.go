package main

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/toolwarden/toolwarden/host"
	"github.com/toolwarden/toolwarden/internal/config"
)

// serverContext is what the agent knows of a stdio server's paths: its
// working directory (cwd, else the agent's), its HOME, and the folders on
// its command line (server-filesystem serves those). Path rules resolve
// relative paths and "~" against it.
func serverContext(s *config.Server) *host.ServerContext {
	sc := &host.ServerContext{}
	wd, _ := os.Getwd()
	sc.Cwd = wd
	if s.Cwd != "" {
		if filepath.IsAbs(s.Cwd) {
			sc.Cwd = filepath.Clean(s.Cwd)
		} else {
			sc.Cwd = filepath.Join(wd, s.Cwd)
		}
	}
	sc.Home = s.Env["HOME"]
	if sc.Home == "" {
		sc.Home, _ = os.UserHomeDir()
	}
	for _, a := range s.Args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		if a == "~" || strings.HasPrefix(a, "~/") {
			a = sc.Home + a[1:]
		} else if !filepath.IsAbs(a) {
			a = filepath.Join(sc.Cwd, a)
		}
		if fi, err := os.Stat(a); err == nil && fi.IsDir() {
			sc.ArgDirs = append(sc.ArgDirs, filepath.Clean(a))
		}
	}
	return sc
}
