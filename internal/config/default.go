package config

import (
	_ "embed"
	"fmt"
)

// defaultTOML is Codex's defaults written out, with a comment per key. It
// is the configuration when none is given, and the documentation of what
// "unset" means.
//
//go:embed default.toml
var defaultTOML []byte

// DefaultTOML returns the text of the embedded default configuration.
func DefaultTOML() []byte { return append([]byte(nil), defaultTOML...) }

// Default returns the embedded default configuration: everything enabled,
// approval mode auto, approval_policy on-request, trust pinned. Each call
// returns a fresh Config, so callers cannot change each other's.
func Default() *Config {
	cfg, err := LoadLayers(Layer{Data: defaultTOML})
	if err != nil {
		// default.toml ships in the binary and a test loads it; this is
		// unreachable unless the build itself is broken.
		panic(fmt.Sprintf("config: embedded default.toml does not load: %v", err))
	}
	cfg.Files = nil
	return cfg
}
