package plugin

import "github.com/toolwarden/toolwarden/plugins"

// This package's tests load the first-party modules by name, as the
// program does when it hands them to the host.
func init() { testBuiltins = plugins.Modules() }
