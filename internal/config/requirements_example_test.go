package config_test

import (
	"fmt"

	"github.com/toolwarden/toolwarden/internal/config"
)

// An admin's requirements file disables an app a user's config enables;
// the result says which user setting was overridden, and by what.
func ExampleConfig_ApplyRequirements() {
	user, err := config.LoadBytes("config.toml", []byte("[apps.github]\nenabled = true\n"))
	if err != nil {
		panic(err)
	}
	reqs, err := config.ParseRequirements("/etc/codex/requirements.toml", []byte("[apps.github]\nenabled = false\n"))
	if err != nil {
		panic(err)
	}
	cfg, err := user.ApplyRequirements(reqs)
	if err != nil {
		panic(err)
	}
	fmt.Println("github enabled:", config.Bool(cfg.Apps["github"].Enabled, true))
	for _, o := range cfg.Overrides {
		fmt.Println(o)
	}
	// Output:
	// github enabled: false
	// config.toml:2:1: apps.github.enabled: app disabled by requirements (required by /etc/codex/requirements.toml:2:1)
}
