package serverspec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/toolwarden/toolwarden/internal/config"
)

// Identity is what makes one MCP server the server it is, as far as its
// tools go: the program that answers (command, arguments, the directory it
// starts in, the environment variables that can make it run other code) or
// the URL it is reached at. Two configs that give one server name to
// different identities are two servers; a tool list or a rule learned for
// one says nothing of the other.
type Identity struct {
	// Command is the file the command runs: found on the server's PATH
	// (from its folder) when it is a bare name, else as given.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	Dir     string   `json:"cwd,omitempty"`
	// Env holds only the variables config.LoadsCode names, as sorted
	// KEY=VALUE: a token changes nothing the server runs, NODE_OPTIONS does.
	// PATH counts through Command instead: agents prepend folders of their
	// own to it (Codex its helpers'), which change nothing the server runs.
	Env []string `json:"env,omitempty"`
	URL string   `json:"url,omitempty"`
}

// Identity is the identity of the server s starts, taken literally: a
// spec that runs `toolwarden wrap -- CMD` is the wrap command line here
// (the hook, which can tell this toolwarden from a file named so, judges
// it by CMD). A stdio spec without Dir or Env starts in this process's
// folder with its environment, so those are what count.
func (s Spec) Identity() Identity {
	if s.URL != "" {
		return Identity{URL: s.URL}
	}
	id := Identity{Command: s.Command, Args: append([]string(nil), s.Args...), Dir: s.Dir}
	if id.Dir == "" {
		id.Dir, _ = os.Getwd()
	}
	id.Dir = canonicalDir(id.Dir)
	env := s.Env
	if env == nil {
		env = os.Environ()
	}
	id.Env = codeLoading(env)
	id.Command, _ = LookPath(id.Command, id.Dir, envValue(env, "PATH"))
	return id
}

// LookPath is the file command names, as a process started in dir with
// PATH path finds it (Node's and Rust's process spawning alike): a path
// with a folder part from dir, a bare name in the first PATH folder
// (relative ones from dir) holding an executable file of that name. A bare
// name found nowhere is not found, and is returned as it is.
func LookPath(command, dir, path string) (file string, found bool) {
	if command == "" {
		return "", false
	}
	if strings.ContainsAny(command, `/\`) {
		if !filepath.IsAbs(command) && dir != "" {
			command = filepath.Join(dir, command)
		}
		return filepath.Clean(command), true
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
			return p, true
		}
	}
	return command, false
}

// envValue is the last value of k in env.
func envValue(env []string, k string) string {
	v := ""
	for _, kv := range env {
		if name, val, ok := strings.Cut(kv, "="); ok && name == k {
			v = val
		}
	}
	return v
}

// canonicalDir resolves symbolic links, so that a folder reached by two
// paths (/tmp and /private/tmp) is one folder.
func canonicalDir(dir string) string {
	if dir == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// codeLoading keeps the variables that can make a server run other code,
// the last setting of a name winning as in exec.
func codeLoading(env []string) []string {
	last := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && config.LoadsCode(k) && k != "PATH" {
			last[k] = v
		}
	}
	out := make([]string, 0, len(last))
	for k, v := range last {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil
	}
	return out
}

// IsZero reports whether id names no server at all.
func (id Identity) IsZero() bool { return id.Command == "" && id.URL == "" }

// Equal reports whether id and o are the same server.
func (id Identity) Equal(o Identity) bool {
	return id.Command == o.Command && slices.Equal(id.Args, o.Args) && id.Dir == o.Dir &&
		slices.Equal(id.Env, o.Env) && id.URL == o.URL
}

// Key is a short digest of id, the same for equal identities.
func (id Identity) Key() string {
	data, _ := json.Marshal(id)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// String describes id on one line: the command line and its folder, or the
// URL.
func (id Identity) String() string {
	if id.URL != "" {
		return id.URL
	}
	s := strings.Join(append([]string{id.Command}, id.Args...), " ")
	if id.Dir != "" {
		s += " (in " + id.Dir + ")"
	}
	if len(id.Env) > 0 {
		s += " with " + strings.Join(id.Env, " ")
	}
	return s
}

// Differs says how other differs from id, in a few words: which of the
// command, arguments, folder, environment or URL.
func (id Identity) Differs(other Identity) string {
	var parts []string
	switch {
	case id.URL != other.URL:
		parts = append(parts, fmt.Sprintf("URL %q, not %q", other.URL, id.URL))
	case id.Command != other.Command:
		parts = append(parts, fmt.Sprintf("command %q, not %q", other.Command, id.Command))
	}
	if id.URL == "" && other.URL == "" {
		if !slices.Equal(id.Args, other.Args) {
			parts = append(parts, fmt.Sprintf("arguments %q, not %q", other.Args, id.Args))
		}
		if id.Dir != other.Dir {
			parts = append(parts, fmt.Sprintf("folder %q, not %q", other.Dir, id.Dir))
		}
		if !slices.Equal(id.Env, other.Env) {
			parts = append(parts, fmt.Sprintf("code-loading environment %q, not %q", other.Env, id.Env))
		}
	}
	return strings.Join(parts, "; ")
}
