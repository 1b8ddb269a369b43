package hook_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/toolwarden/toolwarden/internal/hook"
)

// The hook resolves an event's server once, as its entry gives it, and
// adds the agent's environment for the server's identity: that must be the
// very server a resolution with the environment finds, for every kind of
// entry (no env, env overriding an inherited variable, env adding one).
func TestAServerFoundOnceIsTheSameServerOnceItInherits(t *testing.T) {
	environ := []string{"HOME=/home/u", "PATH=/usr/bin", "NODE_OPTIONS=--inspect"}
	for name, entry := range map[string]string{
		"no env":         `{"command":"npx","args":["fs"]}`,
		"env overrides":  `{"command":"npx","args":["fs"],"env":{"PATH":"/opt/bin","A":"1"}}`,
		"env adds":       `{"command":"npx","args":["fs"],"env":{"Z":"2"}}`,
		"an http server": `{"type":"http","url":"http://127.0.0.1:9/mcp"}`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			project := filepath.Join(dir, "project")
			if err := os.MkdirAll(project, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(project, ".mcp.json"), []byte(`{"mcpServers":{"fs":`+entry+`}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			places := hook.Places{Home: filepath.Join(dir, "home"), Project: project, Getenv: func(string) string { return "" }}
			once := places.Resolve(hook.Claude, "fs")
			places.Environ = environ
			with := places.Resolve(hook.Claude, "fs")
			if once.Outcome != hook.Runs || with.Outcome != hook.Runs {
				t.Fatalf("outcomes %d and %d (%s %s), want both to run", once.Outcome, with.Outcome, once.Why, with.Why)
			}
			got := hook.Inherit(once.Server.Spec, environ)
			if !slices.Equal(got.Env, with.Server.Spec.Env) || !got.Identity().Equal(with.Server.Spec.Identity()) {
				t.Errorf("inherited env %q (identity %v), resolved with the environment %q (identity %v)", got.Env, got.Identity(), with.Server.Spec.Env, with.Server.Spec.Identity())
			}
		})
	}
}
