package host

import (
	"context"

	"github.com/toolwarden/toolwarden/internal/config"
	"github.com/toolwarden/toolwarden/internal/plugin"
	"github.com/toolwarden/toolwarden/internal/policy"
	"github.com/toolwarden/toolwarden/internal/session"
)

// The engine's data types, named here so that a caller needs no other
// package. Each is an alias of the type the engine uses inside: its
// exported fields and methods are part of this package's promise
// (docs/stability.md).

// Config is a loaded configuration: its layers merged, each setting with
// the file:line:col it came from. Load one with LoadConfig; New and Reload take it.
type Config = config.Config

// LoadConfig reads TOML files as layers, later files overriding earlier
// ones key by key as Codex merges them; with no files it returns the
// embedded defaults. An error names the file, line and column of every
// problem, and says what to write instead.
func LoadConfig(files ...string) (*Config, error) { return config.Load(files...) }

// ParseConfig is LoadConfig for one file's contents held in memory; name is
// what errors call the file.
func ParseConfig(name string, data []byte) (*Config, error) { return config.LoadBytes(name, data) }

// Verdict is Allow, Ask or Deny.
type Verdict = policy.Verdict

// Reason is one reason for a decision: its Source ("default", "rule",
// "plugin:<name>", ...), a stable Code and a Message for people.
type Reason = policy.Reason

// Prompt is what an ask shows the human: the question, the options it
// offers and the arguments, cut to fit.
type Prompt = policy.Prompt

// Session is what the host remembers of one conversation: pinned tool
// definitions, approvals, labels (taint) and plugin state.
type Session = session.Session

// SessionLock holds a session file locked between a hook's events; Save
// writes the session back and Close releases the lock.
type SessionLock = session.FileLock

// Approvals is the file of "always" approvals: read by every process of a
// user, revoked with `toolwarden approvals revoke`.
type Approvals = session.Persistent

// The Go-native plugin interfaces: a Plugin added with Settings.WithPlugin
// implements one or more of them.
type (
	// Checker decides calls (the check event).
	Checker = policy.Checker
	// CheckInput is what a Checker sees of a call.
	CheckInput = policy.CheckInput
	// Observer sees calls after they ran (the observe event).
	Observer = policy.Observer
	// ObserveInput is what an Observer sees of a call and its result.
	ObserveInput = policy.ObserveInput
	// ObserveResult is what an Observer answers: labels to add.
	ObserveResult = policy.ObserveResult
	// Lister hides tools from a session's tool lists (the list event).
	Lister = policy.Lister
	// ListInput is one app's tools as a Lister sees them.
	ListInput = policy.ListInput
)

// PluginRuntime compiles plugin modules and holds their compiled code, for
// hosts that share it (Settings.WithPluginRuntime). Close it after the last
// host that uses it.
type PluginRuntime = plugin.Runtime

// NewPluginRuntime makes a runtime with s's plugin cache dir (or none, with
// WithoutPluginDiskCache) and logger. A process that builds many hosts, one
// per request, gives them one runtime, so that each module is compiled
// once rather than at every New.
func NewPluginRuntime(ctx context.Context, s Settings) (*PluginRuntime, error) {
	return plugin.NewRuntime(ctx, plugin.Options{CacheDir: s.pluginCacheDir, NoDiskCache: s.noPluginDiskCache, Logger: s.logger})
}
