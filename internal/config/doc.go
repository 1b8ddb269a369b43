// Package config reads toolwarden's configuration: Codex-style TOML, so that
// an existing ~/.codex/config.toml loads and means what it means to Codex,
// plus toolwarden's own keys (trust, hints, read_only, connectors and
// [policies.<name>]).
//
// Files load as layers, as Codex layers its config: later files override
// earlier ones, tables deep-merge and scalars and arrays replace, and only
// then is the merged result interpreted and validated. Only approval_policy,
// [apps], [mcp_servers] and [policies] belong to toolwarden; every other
// top-level key is Codex's and is ignored. Inside those tables an unknown key
// or a wrong type is an error that names the file, line and column and
// suggests the nearest known key:
//
//	config.toml:12:3: apps.github: unknown key "destructive_enable" (did you mean "destructive_enabled"?)
//
// Load returns a *LoadError holding every diagnostic, not just the first.
// Configs that load but probably do not do what their author meant (Codex's
// trap where an [apps.X] table silently enables X while _default.enabled is
// false, for one) produce warnings in Config.Warnings; see Validate.
//
// Typical use:
//
//	cfg, err := config.Load("/home/me/.codex/config.toml", ".codex/config.toml")
//	if err != nil {
//		fmt.Fprintln(os.Stderr, err) // one "file:line:col: key: message" per line
//		os.Exit(1)
//	}
//	for _, w := range cfg.Warnings {
//		fmt.Fprintln(os.Stderr, w) // "warning: file:line:col: key: message"
//	}
//
// With no files, Load returns Default(): Codex's defaults, embedded from
// default.toml, which documents each key. docs/configuration.md is the full
// reference.
//
// Which files a command reads when none is named is Discover's answer: the
// system file, then the user file "toolwarden init" writes, each when it
// exists (DiscoveredPaths); never a project's.
//
// An admin's requirements files (Codex's requirements.toml and toolwarden's
// additions) are applied after the layers merge: LoadWithRequirements, or
// ParseRequirements and Config.ApplyRequirements, which returns a new Config
// whose Overrides list the user settings they replaced.
//
// A Config is plain data and is never changed after Load returns; internal/policy
// compiles it into the rules it decides with.
package config
