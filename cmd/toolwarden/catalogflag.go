package main

import (
	"flag"

	"github.com/toolwarden/toolwarden/cmd/internal/cli"
)

// catalogFlag registers --catalog (cli.CatalogFlag).
func catalogFlag(fs *flag.FlagSet, e *env) func() (string, error) {
	return cli.CatalogFlag(fs, e.getenv)
}
